//! Watch events as frames of a watch stream: for JSON,
//! `{"type":"ADDED","object":<object>}` and a newline, byte for byte what
//! kube-apiserver writes. Frames are built around an object that is
//! already encoded, so a cached object's bytes are framed without decoding
//! them, and the object can be found again inside a frame as a slice of it.
//! Protobuf frames are kube's: a 4-byte length, then `WatchEvent {type,
//! object: {raw}}` with the object in its envelope (`crate::protobuf`).
//! CBOR frames are kube's `application/cbor-seq` items: a tagged
//! `WatchEvent {type, object}` map with the tagged object last
//! (`crate::cbor`).

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use crate::error::CodecError;
use crate::format::{Encoding, Format};
use crate::serializer::encode;

pub use keelson_apimachinery::watch::EventType;

/// The bytes of a JSON event frame before the object.
fn json_prefix(t: EventType, out: &mut BytesMut) {
    out.put_slice(b"{\"type\":\"");
    out.put_slice(t.as_str().as_bytes());
    out.put_slice(b"\",\"object\":");
}

/// The length of [`json_prefix`] for `t`.
fn json_prefix_len(t: EventType) -> usize {
    r#"{"type":"","object":"#.len() + t.as_str().len()
}

/// One frame of a `format` watch stream: an event of type `t` around
/// `object`, already encoded in `format`.
pub fn encode_event(format: Format, t: EventType, object: &[u8]) -> Result<Bytes, CodecError> {
    match format.encoding {
        Encoding::Json => {
            let mut b = BytesMut::with_capacity(object.len() + 32);
            json_prefix(t, &mut b);
            b.put_slice(object);
            b.put_slice(b"}\n");
            Ok(b.freeze())
        }
        // A length-delimited `WatchEvent` around the enveloped object.
        Encoding::Protobuf => Ok(crate::protobuf::event_frame(t.as_str(), object)),
        // A tagged `WatchEvent` map around the tagged object.
        Encoding::Cbor => Ok(crate::cbor::event_frame(t.as_str(), object)),
        Encoding::Yaml => Err(CodecError::NotServed(format)),
    }
}

/// One frame of a `format` watch stream for an object given as a value
/// (bookmarks, `ERROR` Status events).
pub fn encode_event_value(
    format: Format,
    t: EventType,
    object: &Value,
) -> Result<Bytes, CodecError> {
    encode_event(format, t, &encode(format, object)?)
}

/// The object inside a frame made by [`encode_event`] for `format` and
/// `t` (a slice of it, not a copy); `None` when `frame` is not such a frame.
pub fn object_of_event(format: Format, t: EventType, frame: &Bytes) -> Option<Bytes> {
    match format.encoding {
        Encoding::Json => {
            let prefix_len = json_prefix_len(t);
            let mut prefix = BytesMut::with_capacity(prefix_len);
            json_prefix(t, &mut prefix);
            let ok = frame.len() >= prefix_len + 2
                && frame.ends_with(b"}\n")
                && frame[..prefix_len] == prefix[..];
            ok.then(|| frame.slice(prefix_len..frame.len() - 2))
        }
        Encoding::Protobuf => crate::protobuf::object_of_frame(t.as_str(), frame),
        Encoding::Cbor => crate::cbor::object_of_frame(t.as_str(), frame),
        Encoding::Yaml => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_events_are_kubes_bytes() {
        let f = encode_event(Format::JSON, EventType::Added, br#"{"a":1}"#).unwrap();
        assert_eq!(&f[..], b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n");
        let v = encode_event_value(
            Format::JSON,
            EventType::Bookmark,
            &json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}}),
        )
        .unwrap();
        assert_eq!(
            &v[..],
            &b"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"}}}\n"[..]
        );
        let e = encode_event_value(Format::JSON, EventType::Error, &json!({"code": 410})).unwrap();
        assert_eq!(&e[..], b"{\"type\":\"ERROR\",\"object\":{\"code\":410}}\n");
    }

    #[test]
    fn the_object_is_a_slice_of_its_frame() {
        for t in [EventType::Added, EventType::Modified, EventType::Deleted] {
            let f = encode_event(Format::JSON, t, b"{\"x\":\"\xe2\x9c\x93\"}").unwrap();
            let o = object_of_event(Format::JSON, t, &f).unwrap();
            assert_eq!(&o[..], b"{\"x\":\"\xe2\x9c\x93\"}");
            let inside = f.as_ptr() as usize..f.as_ptr() as usize + f.len();
            assert!(inside.contains(&(o.as_ptr() as usize)));
        }
    }

    #[test]
    fn cbor_events_are_tagged_watch_events() {
        let cbor = Format::object(Encoding::Cbor);
        let v = encode_event_value(cbor, EventType::Error, &json!({"code": 410})).unwrap();
        assert_eq!(
            crate::cbor::decode(&v).unwrap(),
            json!({"type": "ERROR", "object": {"code": 410}})
        );
        let object = encode(cbor, &json!({"a": 1})).unwrap();
        let f = encode_event(cbor, EventType::Modified, &object).unwrap();
        let o = object_of_event(cbor, EventType::Modified, &f).unwrap();
        assert_eq!(o, object);
        let inside = f.as_ptr() as usize..f.as_ptr() as usize + f.len();
        assert!(inside.contains(&(o.as_ptr() as usize)));
        assert_eq!(object_of_event(cbor, EventType::Added, &f), None);
    }

    #[test]
    fn foreign_frames_are_refused() {
        let added = encode_event(Format::JSON, EventType::Added, b"{}").unwrap();
        assert_eq!(
            object_of_event(Format::JSON, EventType::Modified, &added),
            None
        );
        for bad in [&b"garbage"[..], b"{}", b"{\"type\":\"ADDED\",\"object\":"] {
            let b = Bytes::copy_from_slice(bad);
            assert_eq!(object_of_event(Format::JSON, EventType::Added, &b), None);
        }
        assert_eq!(
            object_of_event(Format::YAML, EventType::Added, &added),
            None
        );
        assert!(encode_event(Format::YAML, EventType::Added, b"{}").is_err());
    }
}

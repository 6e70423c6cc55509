//! The serializer table (apimachinery's `SerializerInfo`s): one entry per
//! media type with whether Keelson writes it, whether it decodes request
//! bodies in it, and its stream serializer (the media type of a watch
//! stream and the framer that delimits its events).

use bytes::Bytes;
use keelson_apimachinery::json::to_vec_go;
use serde_json::Value;

use crate::error::CodecError;
use crate::format::{Encoding, Format};
use crate::framer::Framer;

/// How a media type is streamed (watch responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamSerializerInfo {
    /// The Content-Type of the stream.
    pub media_type: &'static str,
    /// How events are delimited in it.
    pub framer: Framer,
}

/// One media type of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerializerInfo {
    pub encoding: Encoding,
    /// `type/subtype`.
    pub media_type: &'static str,
    /// Responses are written in it.
    pub served: bool,
    /// Request bodies are decoded from it.
    pub decodes: bool,
    /// How a watch is streamed in it; `None` when it cannot be (YAML).
    pub stream: Option<StreamSerializerInfo>,
}

/// Every media type Kubernetes knows, in [`Encoding::index`] order.
pub const SERIALIZERS: [SerializerInfo; 4] = [
    SerializerInfo {
        encoding: Encoding::Json,
        media_type: "application/json",
        served: true,
        decodes: true,
        stream: Some(StreamSerializerInfo {
            media_type: "application/json",
            framer: Framer::Json,
        }),
    },
    SerializerInfo {
        encoding: Encoding::Yaml,
        media_type: "application/yaml",
        served: true,
        decodes: true,
        stream: None,
    },
    SerializerInfo {
        encoding: Encoding::Protobuf,
        media_type: "application/vnd.kubernetes.protobuf",
        // Every built-in kind (`crate::protobuf`); custom resources are
        // kube's 406 when asked for.
        served: true,
        decodes: true,
        stream: Some(StreamSerializerInfo {
            media_type: "application/vnd.kubernetes.protobuf;stream=watch",
            framer: Framer::LengthDelimited,
        }),
    },
    SerializerInfo {
        encoding: Encoding::Cbor,
        media_type: "application/cbor",
        // kube-apiserver serves it behind CBORServingAndStorage (alpha in
        // 1.34); Keelson always does.
        served: true,
        decodes: true,
        stream: Some(StreamSerializerInfo {
            media_type: "application/cbor-seq",
            framer: Framer::Cbor,
        }),
    },
];

/// The table entry of an encoding.
pub fn serializer(encoding: Encoding) -> &'static SerializerInfo {
    &SERIALIZERS[encoding.index()]
}

/// Encode an object in `format`: converted to the format's target, then
/// written in its encoding.
pub fn encode(format: Format, object: &Value) -> Result<Bytes, CodecError> {
    encode_with(
        format,
        object,
        &crate::table::TableOptions::default(),
        crate::table::time::now(),
    )
}

/// [`encode`] with a request's `TableOptions`, a Table printed at `now`.
pub fn encode_with(
    format: Format,
    object: &Value,
    opts: &crate::table::TableOptions,
    now: crate::table::Time,
) -> Result<Bytes, CodecError> {
    if matches!(format.target, crate::format::Target::Table(_))
        && !matches!(format.encoding, Encoding::Json | Encoding::Yaml)
    {
        // kube prints Tables in JSON and YAML only.
        return Err(CodecError::NotServed(format));
    }
    let converted = crate::target::convert_with(format, object, opts, now)?;
    let object = converted.as_ref().unwrap_or(object);
    match format.encoding {
        // Go's `encoding/json`: `<`, `>`, `&`, U+2028, U+2029 escaped.
        Encoding::Json => Ok(Bytes::from(to_vec_go(object)?)),
        Encoding::Yaml => Ok(Bytes::from(crate::yaml::to_yaml(object))),
        Encoding::Protobuf => Ok(Bytes::from(crate::protobuf::encode_object(object)?)),
        Encoding::Cbor => Ok(crate::cbor::encode_value(object)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_is_in_encoding_order() {
        for e in Encoding::ALL {
            assert_eq!(serializer(e).encoding, e);
            assert_eq!(serializer(e).media_type, e.media_type());
        }
    }

    #[test]
    fn json_and_yaml_objects() {
        let o = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": "b"}});
        assert_eq!(
            &encode(Format::JSON, &o).unwrap()[..],
            br#"{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"b"}}"#
        );
        assert_eq!(
            &encode(Format::YAML, &o).unwrap()[..],
            b"apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\n"
        );
        let pb = encode(Format::object(Encoding::Protobuf), &o).unwrap();
        assert!(pb.starts_with(b"k8s\0"));
        // Go's JSON of the decoded object shows its zero creationTimestamp.
        let mut back = crate::protobuf::decode_object(&pb).unwrap();
        assert_eq!(back["metadata"], json!({"creationTimestamp": null}));
        back.as_object_mut().unwrap().remove("metadata");
        assert_eq!(back, o);
        let cbor = encode(Format::object(Encoding::Cbor), &o).unwrap();
        assert!(cbor.starts_with(&crate::cbor::SELF_DESCRIBED));
        assert_eq!(crate::cbor::decode(&cbor).unwrap(), o);
        // A kind without a message (a custom resource) is kube's 406.
        let cr = json!({"kind": "Widget", "apiVersion": "example.com/v1"});
        let e = encode(Format::object(Encoding::Protobuf), &cr).unwrap_err();
        let status = keelson_apimachinery::ApiError::from(e);
        assert_eq!(status.code, 406);
        assert_eq!(status.message, "object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message");
    }
}

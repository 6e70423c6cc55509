//! Keelson's codecs, modelled on apimachinery's `CodecFactory`: which media
//! types exist, which one a request asks for, and how objects, lists and
//! watch events are written and read in each.
//!
//! The crate knows media types, encodings and framing. It knows nothing of
//! HTTP servers, storage, the watch cache or the resource catalog: callers
//! hand it `serde_json::Value`s or already encoded bytes and get bytes back.
//!
//! - [`media`]: Accept and Content-Type parsing (media ranges, q-values).
//! - [`format`]: what a response is, [`Format`] = [`Encoding`] × [`Target`].
//! - [`negotiate`]: Accept → [`Format`] (`406`), Content-Type → decoder (`415`).
//! - [`serializer`]: the serializer table, one [`SerializerInfo`] per media
//!   type with its encoder and stream framer.
//! - [`decode`]: request bodies (JSON, YAML, Kubernetes Protobuf, CBOR) to objects.
//! - [`protobuf`]: the data-driven JSON ⇄ Kubernetes Protobuf transcoder
//!   (objects, lists, watch events) for every built-in kind.
//! - [`cbor`]: kube's CBOR (the self-described tag, its encode and decode
//!   rules), objects, lists and `cbor-seq` watch events.
//! - [`yaml`]: YAML responses as kube writes them (go-yaml v2's output of
//!   the object's JSON).
//! - [`framer`]: stream framers (JSON lines, length-delimited Protobuf, CBOR
//!   sequences).
//! - [`watch`]: watch event frames (`{"type":"ADDED","object":...}\n`).
//! - [`list`]: lists written as head, streamed items and tail.
//! - [`target`]: conversions of an object to another target
//!   (`PartialObjectMetadata`, `Table`).
//! - [`table`]: server-side printing: kube's printers, Table and
//!   PartialObjectMetadata views of objects and lists.
#![forbid(unsafe_code)]

pub mod cbor;
pub mod decode;
mod error;
pub mod format;
pub mod framer;
pub mod list;
pub mod media;
pub mod negotiate;
pub mod protobuf;
pub mod serializer;
pub mod table;
pub mod target;
pub mod watch;
pub mod yaml;

pub use error::CodecError;
pub use format::{Encoding, Format, MetaVersion, Target};
pub use framer::Framer;
pub use list::ListEncoder;
pub use media::{media_type, parse_accept, MediaRange};
pub use negotiate::{negotiate_input, negotiate_output};
pub use serializer::{
    encode, encode_with, serializer, SerializerInfo, StreamSerializerInfo, SERIALIZERS,
};
pub use table::{IncludeObject, TableOptions};
pub use watch::{encode_event, encode_event_value, object_of_event, EventType};

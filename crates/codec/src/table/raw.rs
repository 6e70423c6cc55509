//! A list item split for printing without parsing all of it.
//!
//! A Table row needs the printer's few fields and, by default, the item's
//! `metadata` as a `PartialObjectMetadata`. Parsing the whole item into a
//! `serde_json::Value`, copying its metadata and writing it out again cost
//! about 17 µs per pod (`cargo bench -p keelson-codec --bench table`), most
//! of it in `managedFields`, which no built-in printer reads and which are
//! half of a typical object's bytes. [`split`] parses the item but its
//! `managedFields` and hands back the `metadata` bytes as they are, to be
//! copied into the row. serde_json has no parse of this shape (a map whose
//! values stay unparsed), hence [`Members`].

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::META_ORDER;

/// A JSON object's members in their order, each value unparsed. Keys with
/// escapes cannot be borrowed: such an object does not parse as this (the
/// caller falls back to the whole parse).
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(member) = map.next_entry::<&'de str, &'de RawValue>()? {
                    out.push(member);
                }
                Ok(Members(out))
            }
        }

        d.deserialize_map(MembersVisitor)
    }
}

/// A list item ready to print.
pub(super) struct Split<'a> {
    /// The item without `metadata.managedFields`.
    pub object: Value,
    /// The item's `metadata`, byte for byte.
    pub metadata: &'a str,
}

/// `item` split for printing, or `None` when its `metadata` bytes are not
/// what a `PartialObjectMetadata` shows (fields out of `ObjectMeta`'s Go
/// order, fields Go does not know, no `creationTimestamp`) or it does not
/// parse this way: the caller then parses the whole item.
pub(super) fn split(item: &[u8]) -> Option<Split<'_>> {
    let top: Members = serde_json::from_slice(item).ok()?;
    let mut object = Map::with_capacity(top.0.len());
    let mut metadata = None;
    for (key, raw) in top.0 {
        let value = if key == "metadata" {
            let meta: Members = serde_json::from_str(raw.get()).ok()?;
            if !in_go_order(&meta) {
                return None;
            }
            let mut m = Map::with_capacity(meta.0.len());
            for (k, v) in meta.0 {
                if k != "managedFields" {
                    m.insert(k.to_string(), serde_json::from_str(v.get()).ok()?);
                }
            }
            metadata = Some(raw.get());
            Value::Object(m)
        } else {
            serde_json::from_str(raw.get()).ok()?
        };
        object.insert(key.to_string(), value);
    }
    Some(Split {
        object: Value::Object(object),
        metadata: metadata?,
    })
}

/// Whether metadata members are written as Go writes an `ObjectMeta`: each
/// a field of it, in its order, `creationTimestamp` among them.
fn in_go_order(meta: &Members) -> bool {
    let mut last = None;
    let mut created = false;
    for (k, _) in &meta.0 {
        let Some(at) = META_ORDER.iter().position(|f| f == k) else {
            return false;
        };
        if last.is_some_and(|l| l >= at) {
            return false;
        }
        created |= *k == "creationTimestamp";
        last = Some(at);
    }
    created
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use serde_json::{json, Value};

    use super::split;
    use crate::format::MetaVersion;
    use crate::table::{time, IncludeObject, Rows, TableOptions};

    fn pod(meta: Value, phase: &str) -> Vec<u8> {
        // As the watch cache holds it: Go's escapes.
        keelson_apimachinery::json::to_vec_go(&json!({"metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"},
            "status": {"phase": phase, "podIP": "10.0.0.1",
                "containerStatuses": [{"name": "c", "ready": true, "restartCount": 2}]}}))
        .unwrap()
    }

    fn meta() -> Value {
        json!({"name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2026-11-27T03:00:00Z", "labels": {"app": "web"},
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}]})
    }

    /// The row as written, and the row of the whole parsed item.
    fn both(item: &[u8], version: MetaVersion, include: IncludeObject) -> (String, String) {
        let opts = TableOptions {
            include_object: include,
            no_headers: false,
        };
        let rows = Rows::new(version, "v1", "Pod", &opts, time::now());
        let mut out = BytesMut::new();
        rows.write_row(item, &mut out).unwrap();
        let whole = keelson_apimachinery::json::to_string_go(
            &rows.row(&serde_json::from_slice(item).unwrap()),
        );
        (String::from_utf8(out.to_vec()).unwrap(), whole.unwrap())
    }

    #[test]
    fn rows_from_split_items_are_the_whole_parse_byte_for_byte() {
        for phase in ["Running", "Succeeded"] {
            for version in [MetaVersion::V1, MetaVersion::V1beta1] {
                let item = pod(meta(), phase);
                let s = split(&item).expect("metadata in Go order splits");
                assert!(s.metadata.contains("managedFields"));
                assert!(s.object["metadata"].get("managedFields").is_none());
                let (fast, whole) = both(&item, version, IncludeObject::Metadata);
                assert_eq!(fast, whole);
            }
        }
    }

    #[test]
    fn other_items_are_parsed_whole() {
        // Out of ObjectMeta's order, no creationTimestamp, a field Go does
        // not know, an escaped key: no split, and the same row.
        let mut reordered = json!({"namespace": "ns", "name": "p"});
        reordered["creationTimestamp"] = json!("2026-11-27T03:00:00Z");
        let no_time = json!({"name": "p", "namespace": "ns"});
        let unknown = json!({"name": "p", "creationTimestamp": "2026-11-27T03:00:00Z", "zz": 1});
        for m in [reordered, no_time, unknown] {
            let item = pod(m, "Running");
            assert!(split(&item).is_none(), "{}", String::from_utf8_lossy(&item));
            let (fast, whole) = both(&item, MetaVersion::V1, IncludeObject::Metadata);
            assert_eq!(fast, whole);
        }
        let escaped = br#"{"metadata":{"name":"p","creationTimestamp":null},"sp\u0065c":{}}"#;
        assert!(split(escaped).is_none());
        let (fast, whole) = both(escaped, MetaVersion::V1, IncludeObject::Metadata);
        assert_eq!(fast, whole);
        // Other includeObject values take the whole parse.
        let item = pod(meta(), "Running");
        for include in [IncludeObject::None, IncludeObject::Object] {
            let (fast, whole) = both(&item, MetaVersion::V1, include);
            assert_eq!(fast, whole);
        }
    }
}

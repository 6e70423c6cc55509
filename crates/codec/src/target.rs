//! Conversions of an object to the target a format asks for. Only
//! `PartialObjectMetadata` is a pure function of the object; a `Table`
//! needs the resource's printer columns and is not written yet.

use serde_json::{Map, Value};

use crate::error::CodecError;
use crate::format::{Format, Target};

/// The object as `format.target` asks for it; `None` when that is the
/// object itself.
pub fn convert(format: Format, object: &Value) -> Result<Option<Value>, CodecError> {
    match format.target {
        Target::Object => Ok(None),
        Target::PartialObjectMetadata(v) => {
            let map = object
                .as_object()
                .ok_or(CodecError::Shape("an object is not a map"))?;
            let mut out = Map::new();
            out.insert("kind".into(), Value::from("PartialObjectMetadata"));
            out.insert("apiVersion".into(), Value::from(v.api_version()));
            out.insert(
                "metadata".into(),
                map.get("metadata")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            );
            Ok(Some(Value::Object(out)))
        }
        Target::Table(_) | Target::PartialObjectMetadataList(_) => {
            Err(CodecError::NotServed(format))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Encoding, MetaVersion};
    use serde_json::json;

    #[test]
    fn partial_object_metadata_keeps_only_metadata() {
        let f = Format {
            encoding: Encoding::Json,
            target: Target::PartialObjectMetadata(MetaVersion::V1beta1),
        };
        let o = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}, "data": {"k": "v"}});
        assert_eq!(
            convert(f, &o).unwrap(),
            Some(
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1", "metadata": {"name": "a"}})
            )
        );
        assert_eq!(convert(Format::JSON, &o).unwrap(), None);
        assert!(convert(f, &json!([1])).is_err());
        let table = Format {
            encoding: Encoding::Json,
            target: Target::Table(MetaVersion::V1),
        };
        assert!(matches!(convert(table, &o), Err(CodecError::NotServed(_))));
    }
}

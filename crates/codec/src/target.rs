//! Conversions of an object to the target a format asks for (kube's
//! `transformObject`): a `PartialObjectMetadata`, or a `Table` printed by
//! the resource's printer ([`crate::table`]). A `Status` is never converted.

use serde_json::Value;

use crate::error::CodecError;
use crate::format::{Format, Target};
use crate::table::{self, TableOptions, Time};

/// Whether `object` is a `Status` (errors are sent as they are, whatever
/// the target).
fn is_status(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Status")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// The object as `format.target` asks for it, with kube's default
/// `TableOptions` and the current time; `None` when that is the object
/// itself.
pub fn convert(format: Format, object: &Value) -> Result<Option<Value>, CodecError> {
    convert_with(format, object, &TableOptions::default(), table::time::now())
}

/// The object as `format.target` asks for it, a Table printed at `now`
/// with `opts`; `None` when that is the object itself.
pub fn convert_with(
    format: Format,
    object: &Value,
    opts: &TableOptions,
    now: Time,
) -> Result<Option<Value>, CodecError> {
    if format.target == Target::Object || is_status(object) {
        return Ok(None);
    }
    if !object.is_object() {
        return Err(CodecError::Shape("an object is not a map"));
    }
    match format.target {
        Target::Object => Ok(None),
        Target::PartialObjectMetadata(v) => Ok(Some(table::partial_object_metadata(v, object))),
        Target::Table(v) => Ok(Some(table::object_table(v, object, opts, now))),
        Target::PartialObjectMetadataList(_) => {
            let t = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
            Err(CodecError::NotAcceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                table::go_type(t("apiVersion"), t("kind"))
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Encoding, MetaVersion};
    use serde_json::json;

    fn format(target: Target) -> Format {
        Format {
            encoding: Encoding::Json,
            target,
        }
    }

    #[test]
    fn partial_object_metadata_keeps_only_metadata() {
        let f = format(Target::PartialObjectMetadata(MetaVersion::V1beta1));
        let o = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "creationTimestamp": "2024-01-01T00:00:00Z"}, "data": {"k": "v"}});
        assert_eq!(
            convert(f, &o).unwrap(),
            Some(
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1", "metadata": {"name": "a", "creationTimestamp": "2024-01-01T00:00:00Z"}})
            )
        );
        assert_eq!(convert(Format::JSON, &o).unwrap(), None);
        assert!(convert(f, &json!([1])).is_err());
    }

    #[test]
    fn tables_lists_and_statuses() {
        let o = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}});
        let t = convert(format(Target::Table(MetaVersion::V1)), &o)
            .unwrap()
            .unwrap();
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["rows"][0]["cells"][0], "a");
        let e = convert(
            format(Target::PartialObjectMetadataList(MetaVersion::V1)),
            &o,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "code": 404});
        for target in [
            Target::Table(MetaVersion::V1),
            Target::PartialObjectMetadata(MetaVersion::V1),
            Target::PartialObjectMetadataList(MetaVersion::V1),
        ] {
            assert_eq!(convert(format(target), &status).unwrap(), None);
        }
    }
}

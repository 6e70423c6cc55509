//! Strategic merge patch (`application/strategic-merge-patch+json`),
//! kube's `k8s.io/apimachinery/pkg/util/strategicpatch` as
//! kube-apiserver applies it (`StrategicMergeMapPatch`), with the answers
//! of its patch handler (`strategicPatchObject`,
//! `interpretStrategicMergePatchError`).
//!
//! The merge rules (patch strategy, merge key) come from the kind's schema
//! in the catalog; a field without a schema merges its maps and replaces
//! its lists.

mod convert;
mod directives;
mod error;
mod gofmt;
mod gosort;
mod list;
mod merge;
mod meta;
mod order;

use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::{Map, Value};

use crate::gojson;
use crate::schema::TypeRef;

/// Apply a strategic merge patch body to `original` with the merge rules of
/// `ty` (the object's kind).
///
/// A body that is not JSON, or not a JSON object, is a 400 with Go's
/// decoding error as the message (kube decodes the body into a
/// `map[string]interface{}` and answers `BadRequest(err.Error())`); `null`
/// decodes to an empty patch. A merged object that does not convert into
/// the kind's types is kube's `422` quoting the patch ([`convert`]).
pub(crate) fn apply(original: &Value, patch: &[u8], ty: TypeRef<'_>) -> ApiResult<Value> {
    let patch = match gojson::parse(patch).map_err(ApiError::bad_request)? {
        Value::Object(m) => m,
        Value::Null => return Ok(original.clone()),
        other => {
            return Err(ApiError::bad_request(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                gojson::kind(&other)
            )))
        }
    };
    let original = original.as_object().cloned().unwrap_or_else(Map::new);
    let merged = merge::merge_map(original, patch.clone(), ty).map_err(ApiError::from)?;
    convert::check(&merged, &patch, ty)?;
    Ok(Value::Object(merged))
}

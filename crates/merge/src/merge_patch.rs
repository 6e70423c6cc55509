//! RFC 7386 JSON Merge Patch (`null` deletes), with kube's errors.

use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::Value;

use crate::errors::decoding;
use crate::gojson;

/// Merge `body` into `original`: `400` when the body is not a JSON object.
pub(crate) fn apply(original: &Value, body: &[u8]) -> ApiResult<Value> {
    let patch = gojson::parse(body).map_err(|e| decoding(&e))?;
    match &patch {
        Value::Object(_) => {}
        // Go decodes `null` into a nil map; evanphx/json-patch then
        // rejects it as ErrBadJSONPatch.
        Value::Null => return Err(ApiError::bad_request("Invalid JSON Patch")),
        other => {
            return Err(decoding(&format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                gojson::kind(other)
            )))
        }
    }
    let mut doc = original.clone();
    json_patch::merge(&mut doc, &patch);
    Ok(doc)
}

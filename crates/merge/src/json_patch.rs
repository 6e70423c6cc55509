//! RFC 6902 JSON Patch, decoded and applied as kube-apiserver does.

use json_patch::PatchOperation;
use keelson_apimachinery::ApiResult;
use serde_json::Value;

use crate::errors::{decoding, rejected, too_many_operations, MAX_JSON_PATCH_OPERATIONS};
use crate::gojson;

/// Decode `body` like Go decodes it into `[]handlers.jsonPatchOp`: `400`
/// with Go's wording when it is not JSON or has the wrong shape.
fn decode_ops(body: &[u8]) -> ApiResult<Vec<Value>> {
    let v = gojson::parse(body).map_err(|e| decoding(&e))?;
    let ops = match v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(ops) => ops,
        other => {
            return Err(decoding(&format!(
                "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                gojson::kind(&other)
            )))
        }
    };
    for op in &ops {
        match op {
            Value::Null => {}
            Value::Object(m) => {
                for field in ["op", "path", "from"] {
                    match m.get(field) {
                        None | Some(Value::Null) | Some(Value::String(_)) => {}
                        Some(other) => {
                            return Err(decoding(&format!(
                                "json: cannot unmarshal {} into Go struct field jsonPatchOp.{field} of type string",
                                gojson::kind(other)
                            )))
                        }
                    }
                }
            }
            other => {
                return Err(decoding(&format!(
                    "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                    gojson::kind(other)
                )))
            }
        }
    }
    Ok(ops)
}

/// Apply a JSON patch to `original`: `400` undecodable, `413` over 10000
/// operations, `422` for any operation that fails (including `test`).
pub(crate) fn apply(original: &Value, body: &[u8]) -> ApiResult<Value> {
    let ops = decode_ops(body)?;
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(too_many_operations(ops.len()));
    }
    // An operation json-patch cannot read (unknown `op`, missing `path`)
    // fails when applied in kube, so it is a 422 here too.
    let ops: Vec<PatchOperation> = ops
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|_| rejected())?;
    let mut doc = original.clone();
    json_patch::patch(&mut doc, &ops).map_err(|_| rejected())?;
    Ok(doc)
}

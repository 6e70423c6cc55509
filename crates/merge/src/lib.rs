//! Keelson's merge service logic: applying PATCH bodies to stored objects
//! with kube-apiserver's errors. JSON Patch and JSON Merge Patch are
//! supported; Strategic Merge Patch and Server-Side Apply are `415` until
//! they land.
//!
//! [`LocalMerge`] implements [`keelson_api::MergeApi`].
#![forbid(unsafe_code)]

mod errors;
mod gojson;
mod json_patch;
mod merge_patch;

use async_trait::async_trait;
use keelson_api::{MergeApi, PatchRequest, PatchType};
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use serde_json::Value;

pub use errors::{MAX_JSON_PATCH_OPERATIONS, SUPPORTED_PATCH_TYPES};

/// The in-process merge service. Stateless.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalMerge;

impl LocalMerge {
    /// A merge service.
    pub fn new() -> LocalMerge {
        LocalMerge
    }
}

#[async_trait]
impl MergeApi for LocalMerge {
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value> {
        let patched = match req.patch_type {
            PatchType::Json => json_patch::apply(&req.original, &req.patch)?,
            PatchType::Merge => merge_patch::apply(&req.original, &req.patch)?,
            PatchType::StrategicMerge | PatchType::Apply => {
                return Err(errors::unsupported(req.patch_type.media_type()))
            }
        };
        ensure_object(patched)
    }
}

/// The patched document must decode as an object; kube reports a failure
/// as `422` against the `patch` field with the patched JSON as the value.
fn ensure_object(patched: Value) -> ApiResult<Value> {
    if patched.is_object() {
        return Ok(patched);
    }
    let json = serde_json::to_string(&patched).unwrap_or_default();
    let msg = format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
        gojson::kind(&patched)
    );
    Err(ApiError::invalid(
        "",
        "",
        "",
        &[FieldError::invalid("patch", json, &msg)],
    ))
}

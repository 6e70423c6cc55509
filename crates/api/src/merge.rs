//! The merge contract: patch formats (and later Server-Side Apply).

use async_trait::async_trait;
use keelson_apimachinery::{ApiResult, GroupResource};
use serde_json::Value;

/// The PATCH body format, from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/apply-patch+yaml` (Server-Side Apply).
    Apply,
}

impl PatchType {
    /// From a Content-Type media type (parameters already stripped).
    pub fn from_media_type(mt: &str) -> Option<Self> {
        match mt {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::StrategicMerge),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }

    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// One patch to apply to a stored object.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchRequest {
    pub patch_type: PatchType,
    pub gr: GroupResource,
    /// Kind of the object, for error messages.
    pub kind: String,
    /// The object as stored.
    pub original: Value,
    /// The patch body as received.
    pub patch: Vec<u8>,
}

/// Applies patches. Errors are `Status` errors as kube-apiserver's patch
/// handler reports them (`400` undecodable, `422` failed op, `415`
/// unsupported type).
#[async_trait]
pub trait MergeApi: Send + Sync + 'static {
    /// Apply one patch and return the patched object.
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value>;

    /// Readiness of the service (the gateway's `/readyz` runs one check per
    /// backing service). Local implementations are ready once constructed.
    async fn ready(&self) -> ApiResult<()> {
        Ok(())
    }
}

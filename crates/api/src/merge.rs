//! The merge contract: patch formats, Server-Side Apply and the
//! managedFields bookkeeping of every write.

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

/// Who writes, for `metadata.managedFields` (kube's field manager).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldOwner {
    /// The manager: `fieldManager`, else derived from the User-Agent.
    pub manager: String,
    /// `group/version` the object is written at (the entry's `apiVersion`,
    /// and the schema the fields are read with).
    pub api_version: String,
    /// The subresource written (`status`, `scale`); empty for the resource.
    pub subresource: String,
}

/// One patch to apply to a stored object.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchRequest {
    pub patch_type: PatchType,
    pub gr: GroupResource,
    /// Kind of the object, for error messages.
    pub kind: String,
    /// Who patches. Apply records ownership itself; the other patch types
    /// leave managedFields to [`MergeApi::update_managed_fields`].
    pub owner: FieldOwner,
    /// `force=true` on an apply: take over conflicting fields.
    pub force: bool,
    /// The object as stored; `Value::Null` when there is none (an apply
    /// then creates it).
    pub original: Value,
    /// The patch body as received.
    pub patch: Vec<u8>,
}

/// A write that is not an apply (create, update, a non-apply patch), whose
/// changes are recorded as an `Update` entry of its manager.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedFieldsRequest {
    pub gr: GroupResource,
    /// Kind of the object.
    pub kind: String,
    /// Who writes.
    pub owner: FieldOwner,
    /// The object as stored; `Value::Null` on create.
    pub old: Value,
    /// The object to store, as admitted (with any managedFields the client
    /// sent: kube lets a client set or clear them).
    pub new: Value,
}

/// Applies patches. Errors are `Status` errors as kube-apiserver's patch
/// handler reports them (`400` undecodable, `422` failed op, `415`
/// unsupported type).
#[async_trait]
pub trait MergeApi: Send + Sync + 'static {
    /// Apply one patch and return the patched object.
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value>;

    /// `new` with its `metadata.managedFields` brought up to date for an
    /// `Update` operation by `req.owner` (kube's `FieldManager.Update`).
    async fn update_managed_fields(&self, req: ManagedFieldsRequest) -> ApiResult<Value>;

    /// Readiness of the service (the gateway's `/readyz` runs one check per
    /// backing service). Local implementations are ready once constructed.
    async fn ready(&self) -> ApiResult<()> {
        Ok(())
    }
}

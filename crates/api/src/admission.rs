//! The admission contract: defaulting, validation and admission plugins.

use async_trait::async_trait;
pub use keelson_apimachinery::options::FieldValidation;
use keelson_apimachinery::{ApiResult, GroupResource};
use serde_json::Value;

/// The write being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// One admission call.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRequest {
    pub operation: Operation,
    pub gr: GroupResource,
    /// API version of the resource as requested (`v1`, `apps/v1`).
    pub api_version: String,
    /// Kind of the object (`Pod`; a subresource's own kind, `Scale`).
    pub kind: String,
    /// API version of a subresource's own kind when it is not the
    /// resource's (`policy/v1` for a `pods/eviction` Eviction,
    /// `autoscaling/v1` for a `/scale` Scale); empty when the object is
    /// the resource's kind at `api_version`.
    pub kind_api_version: String,
    /// Request namespace; empty for cluster scope.
    pub namespace: String,
    /// Object name (may be empty on create with generateName).
    pub name: String,
    /// Subresource (`status`, `scale`) or empty.
    pub subresource: String,
    /// The new object (create/update).
    pub object: Option<Value>,
    /// The stored object (update/delete).
    pub old_object: Option<Value>,
    /// The request body as received, for duplicate-field detection; `None`
    /// for patches (the object is the patched result).
    pub raw_body: Option<Vec<u8>>,
    /// The request came as a PATCH (strict errors are `422` then).
    pub is_patch: bool,
    pub field_validation: FieldValidation,
    pub dry_run: bool,
    /// Who asked (after impersonation); `None` when not known (tools,
    /// tests). Admission webhooks receive it as `request.userInfo`.
    pub user: Option<UserInfo>,
    /// The operation's options as kube passes them to admission: a
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions` object
    /// (`meta.k8s.io/v1`, with `dryRun`, `fieldManager`, ...).
    pub options: Option<Value>,
}

impl AdmissionRequest {
    /// The group and version of the object's kind as admission reports it
    /// (`request.kind`): a subresource's own kind's, else the resource's
    /// group at `version`.
    pub fn kind_group_version<'a>(&'a self, version: &'a str) -> (&'a str, &'a str) {
        if self.kind_api_version.is_empty() {
            return (&self.gr.group, version);
        }
        self.kind_api_version
            .split_once('/')
            .unwrap_or(("", &self.kind_api_version))
    }
}

/// The requesting user as admission sees it (kube's
/// `authentication.k8s.io/v1` `UserInfo`, serialized as in an
/// `AdmissionReview`).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

/// Which of admission's phases one call runs. kube's registry does work
/// between them (a Service's IP and node-port allocation, `BeginCreate`;
/// a Binding's validation), so a caller with such work runs the phases
/// as two calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AdmitPhase {
    /// The whole chain.
    #[default]
    All,
    /// Decoding, defaulting and the mutating phase (NamespaceLifecycle,
    /// built-in mutating plugins, mutating policies and webhooks, the
    /// strategy's preparation): the object comes back mutated.
    Mutating,
    /// Validation and the validating phase (built-in validating plugins,
    /// policies, webhooks, quota) of an object the mutating phase gave.
    Validating,
}

impl AdmitPhase {
    /// Runs decoding, defaulting and mutating admission.
    pub fn mutates(self) -> bool {
        self != AdmitPhase::Validating
    }

    /// Runs validation and validating admission.
    pub fn validates(self) -> bool {
        self != AdmitPhase::Mutating
    }
}

/// A successful admission.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AdmissionResponse {
    /// The object after defaulting (create/update), `None` on delete.
    pub object: Option<Value>,
    /// The object as decoded and defaulted, before the mutating phase
    /// (built-in plugins, policies, webhooks, the registry strategy's
    /// preparation); set only when that phase changed it. kube's field
    /// manager records an `Update` from this object (it runs before
    /// mutating admission), so what admission added is not the writer's.
    pub unmutated: Option<Value>,
    /// Warnings to send as `Warning: 299 - "..."` headers.
    pub warnings: Vec<String>,
    /// Audit annotations the admission steps recorded (kube's
    /// `AddAnnotation`: PodSecurity's, policies', webhooks').
    pub audit_annotations: std::collections::BTreeMap<String, String>,
}

/// Admission: returns the admitted (possibly mutated) object, or a `Status`
/// error such as `422 Invalid`, `400 BadRequest` (strict decoding) or `404`
/// for a missing namespace.
#[async_trait]
pub trait AdmissionApi: Send + Sync + 'static {
    /// Admit one write.
    async fn admit(&self, req: AdmissionRequest) -> ApiResult<AdmissionResponse> {
        self.admit_phase(req, AdmitPhase::All).await
    }

    /// Run one phase of a create or update's admission (a delete runs
    /// whole whatever the phase).
    async fn admit_phase(
        &self,
        req: AdmissionRequest,
        phase: AdmitPhase,
    ) -> ApiResult<AdmissionResponse>;

    /// Readiness of the service (the gateway's `/readyz` runs one check per
    /// backing service). Local implementations are ready once constructed.
    async fn ready(&self) -> ApiResult<()> {
        Ok(())
    }
}

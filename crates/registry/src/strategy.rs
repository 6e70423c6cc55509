//! Per-resource behaviour as catalog data: what kube-apiserver keeps in each
//! resource's `RESTCreateStrategy`/`RESTUpdateStrategy`/`RESTDeleteStrategy`
//! and store options (`ReturnDeletedObject`, `AllowCreateOnUpdate`, the
//! field-label conversion functions, the scale subresource's paths).
//!
//! The generic handlers read these fields instead of matching resource
//! names; where behaviour needs code, a small hook enum names it
//! ([`StatusPolicy`], [`GracefulDeletion`]). The built-in values are filled
//! in code (`builtin.rs`); a resource added at runtime brings its own.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// How one resource behaves beyond its scope and verbs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Strategy {
    /// DELETE answers with the deleted object instead of a `Status`
    /// (`ReturnDeletedObject`: pods, services, namespaces).
    pub returns_deleted_object: bool,
    /// PUT of a missing object creates it (`AllowCreateOnUpdate`).
    pub allow_create_on_update: bool,
    /// A PUT must carry `metadata.resourceVersion` (kube's
    /// `AllowUnconditionalUpdate` is false): without one, or with `"0"`,
    /// it is a `422`. Most built-ins allow unconditional updates.
    pub requires_resource_version: bool,
    /// `metadata.generation` is bumped on spec changes.
    pub tracks_generation: bool,
    /// What happens to `status` on create and update.
    pub status: StatusPolicy,
    /// Whether a DELETE waits for a grace period.
    pub graceful_deletion: GracefulDeletion,
    /// Where the `scale` subresource reads and writes, if served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScalePaths>,
    /// The `metadata` fields a `/status` write keeps from the stored object
    /// (kube's status strategies: `PrepareForUpdate` and `GetResetFields`);
    /// a status write takes the rest of `metadata` from the request and
    /// everything else from the stored object.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub status_resets_metadata: Vec<String>,
    /// Field selector labels beyond `metadata.name` and
    /// `metadata.namespace`; `None` when the resource has no field-label
    /// conversion of its own (a different error for unknown fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selectable_fields: Option<Vec<String>>,
}

impl Strategy {
    /// Whether every field has its default (kept out of `catalog.json`).
    pub fn is_default(&self) -> bool {
        *self == Strategy::default()
    }
}

/// What a write does to the object's `status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StatusPolicy {
    /// `status` is ordinary data (no `status` subresource).
    #[default]
    Plain,
    /// A `status` subresource owns it: a create starts from `{}`, a write to
    /// the main resource keeps the stored status.
    Subresource,
    /// As [`StatusPolicy::Subresource`], but a create starts as
    /// `{"phase":"Pending"}` (pods).
    PodPending,
    /// As [`StatusPolicy::Subresource`], but a create starts as
    /// `{"phase":"Pending","lastPhaseTransitionTime":<now>}` (persistent
    /// volumes: kube's strategy stamps the phase's start).
    PendingSinceCreate,
    /// As [`StatusPolicy::Subresource`], but a create keeps the request's
    /// status (nodes: kube lets a node register with its status).
    KeptOnCreate,
    /// A custom resource's `status` subresource: a create drops the
    /// request's status (admission removes it), a write to the main
    /// resource keeps the stored status.
    CustomSubresource,
}

impl StatusPolicy {
    /// The status a created object starts with, or `None` to keep the
    /// request's; a phase start time is the current time.
    pub fn initial_status(self) -> Option<Value> {
        self.initial_status_at(&keelson_apimachinery::meta::now_rfc3339())
    }

    /// [`StatusPolicy::initial_status`] with `now` (RFC 3339) as the
    /// current time.
    pub fn initial_status_at(self, now: &str) -> Option<Value> {
        match self {
            StatusPolicy::Plain | StatusPolicy::CustomSubresource | StatusPolicy::KeptOnCreate => {
                None
            }
            StatusPolicy::Subresource => Some(json!({})),
            StatusPolicy::PodPending => Some(json!({"phase": "Pending"})),
            StatusPolicy::PendingSinceCreate => {
                Some(json!({"phase": "Pending", "lastPhaseTransitionTime": now}))
            }
        }
    }

    /// Whether an update of the main resource keeps the stored status.
    pub fn keeps_stored_status(self) -> bool {
        self != StatusPolicy::Plain
    }
}

/// How long a DELETE waits before the object goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GracefulDeletion {
    /// Deleted at once.
    #[default]
    Immediate,
    /// Pods: a pod bound to a node waits for the requested grace period,
    /// else its `spec.terminationGracePeriodSeconds`, else 30 seconds; an
    /// unscheduled pod goes at once.
    PodOnNode,
}

/// kube's default `terminationGracePeriodSeconds`.
const DEFAULT_POD_GRACE_SECONDS: i64 = 30;

impl GracefulDeletion {
    /// The grace period to delete `stored` with, given the request's
    /// `gracePeriodSeconds`; `None` deletes at once.
    pub fn grace_period_seconds(self, stored: &Value, requested: Option<i64>) -> Option<i64> {
        match self {
            GracefulDeletion::Immediate => None,
            GracefulDeletion::PodOnNode => {
                let bound = stored
                    .pointer("/spec/nodeName")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty());
                if !bound {
                    // Unscheduled pods are removed at once, as in kube-apiserver.
                    return None;
                }
                let g = requested.unwrap_or_else(|| {
                    stored
                        .pointer("/spec/terminationGracePeriodSeconds")
                        .and_then(Value::as_i64)
                        .unwrap_or(DEFAULT_POD_GRACE_SECONDS)
                });
                (g > 0).then_some(g)
            }
        }
    }
}

/// The `scale` subresource's paths, as JSON pointers into the object
/// (a CRD's `specReplicasPath`, `statusReplicasPath`, `labelSelectorPath`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalePaths {
    /// Desired replicas, e.g. `/spec/replicas`.
    pub spec_replicas: String,
    /// Observed replicas, e.g. `/status/replicas`.
    pub status_replicas: String,
    /// The label selector (an object or a selector string), e.g. `/spec/selector`.
    pub label_selector: String,
}

impl Default for ScalePaths {
    /// The paths of the built-in workloads.
    fn default() -> Self {
        ScalePaths {
            spec_replicas: "/spec/replicas".into(),
            status_replicas: "/status/replicas".into(),
            label_selector: "/spec/selector".into(),
        }
    }
}

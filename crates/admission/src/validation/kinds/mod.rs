//! Per-kind validation: kube-apiserver 1.34's `Validate<Kind>`,
//! `Validate<Kind>Update` and `Validate<Kind>StatusUpdate`
//! (`pkg/apis/<group>/validation/validation.go`), one module per API group,
//! one function per kube function, named like it.
//!
//! Every function takes the object as decoded JSON (wrong types were already
//! refused by the decoder) and never panics on a surprising shape: a field
//! of an unexpected type is treated as absent.

mod admission_policy;
mod admissionregistration;
mod apiregistration;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core_cluster;
mod core_config;
mod core_other;
mod core_pod;
mod core_pv;
mod core_service;
mod discovery;
mod events;
mod flowcontrol;
pub(crate) mod netaddr;
mod networking;
mod node;
mod path;
mod policy;
mod rbac;
mod resource;
mod scheduling;
mod storage;
pub(crate) mod util;
mod warnings;

pub(crate) use core_service::cluster_ips_pre_validation;
pub(crate) use path::Path;
pub(crate) use util::duplicate;
pub(crate) use warnings::warnings;

use keelson_api::Operation;
use keelson_apimachinery::FieldError;
use serde_json::Value;

/// What one write is: its operation, subresource and the stored object on
/// update.
#[derive(Clone, Copy)]
pub(crate) struct Write<'a> {
    pub op: Operation,
    /// `status`, `scale`, `finalize`, ... or empty for the main resource.
    pub subresource: &'a str,
    /// The stored object (update only).
    pub old: Option<&'a Value>,
    /// kube-apiserver's `--allow-privileged`.
    pub allow_privileged: bool,
}

impl<'a> Write<'a> {
    /// The stored object when this is an update.
    pub fn old(&self) -> Option<&'a Value> {
        self.old.filter(|_| self.op == Operation::Update)
    }

    /// Whether this is a write of the `status` subresource.
    pub fn is_status(&self) -> bool {
        self.subresource == "status"
    }
}

/// The per-kind errors of `obj` (a `group`/`kind` object), in kube's order.
/// Kinds without rules yet answer no errors (listed in
/// `docs/compatibility.md`).
pub(crate) fn validate(group: &str, kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    // `ValidateObjectMetaUpdate` opens every `Validate<Kind>Update`.
    let mut errs = match w.old() {
        Some(old) => super::objectmeta::validate_meta_update(obj, old),
        None => Vec::new(),
    };
    errs.extend(super::declarative::combine(
        group,
        kind,
        w,
        obj,
        validate_group(group, kind, w, obj),
    ));
    errs
}

/// Whether the kind's own rules report every required field kube reports
/// (kube's decoder enforces none: only `Validate<Kind>` does), so the
/// schema's required-field pass is skipped for it.
pub(crate) fn covers_required(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Node" | "Event")
            | (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration"
            )
            | (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration"
            )
            | ("node.k8s.io", "RuntimeClass")
            | ("discovery.k8s.io", "EndpointSlice")
            | (
                "certificates.k8s.io",
                "CertificateSigningRequest" | "ClusterTrustBundle"
            )
            | (
                "storage.k8s.io",
                "StorageClass"
                    | "VolumeAttachment"
                    | "CSIDriver"
                    | "CSINode"
                    | "CSIStorageCapacity"
                    | "VolumeAttributesClass"
            )
            | ("networking.k8s.io", "ServiceCIDR" | "IPAddress")
            | ("apiregistration.k8s.io", "APIService")
            | ("coordination.k8s.io", "LeaseCandidate")
            | ("flowcontrol.apiserver.k8s.io", "FlowSchema")
            | ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration")
            | ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy")
            | (
                "admissionregistration.k8s.io",
                "ValidatingAdmissionPolicyBinding"
            )
            | (
                "admissionregistration.k8s.io",
                "MutatingAdmissionPolicy" | "MutatingAdmissionPolicyBinding"
            )
            | (
                "resource.k8s.io",
                "DeviceClass" | "ResourceClaim" | "ResourceClaimTemplate" | "ResourceSlice"
            )
    )
}

pub(crate) fn validate_group(
    group: &str,
    kind: &str,
    w: Write<'_>,
    obj: &Value,
) -> Vec<FieldError> {
    match group {
        "" => match kind {
            "Pod" | "PodTemplate" | "ReplicationController" => core_pod::validate(kind, w, obj),
            "Service" | "Endpoints" => core_service::validate(kind, w, obj),
            "ConfigMap" | "Secret" => core_config::validate(kind, w, obj),
            "PersistentVolume" => core_pv::validate(w, obj),
            "Node" | "ResourceQuota" | "LimitRange" => core_cluster::validate(kind, w, obj),
            _ => core_other::validate(kind, w, obj),
        },
        "apps" => apps::validate(kind, w, obj),
        "batch" => batch::validate(kind, w, obj),
        "autoscaling" => autoscaling::validate(kind, w, obj),
        "policy" => policy::validate(kind, w, obj),
        "networking.k8s.io" => networking::validate(kind, w, obj),
        "rbac.authorization.k8s.io" => rbac::validate(kind, w, obj),
        "scheduling.k8s.io" => scheduling::validate(kind, w, obj),
        "coordination.k8s.io" => coordination::validate(kind, w, obj),
        "storage.k8s.io" => storage::validate(kind, w, obj),
        "events.k8s.io" => events::validate(kind, w, obj),
        "discovery.k8s.io" => discovery::validate(kind, w, obj),
        "certificates.k8s.io" => certificates::validate(kind, w, obj),
        "flowcontrol.apiserver.k8s.io" => flowcontrol::validate(kind, w, obj),
        "admissionregistration.k8s.io" => admissionregistration::validate(kind, w, obj),
        "node.k8s.io" => node::validate(kind, w, obj),
        "resource.k8s.io" => resource::validate(kind, w, obj),
        "apiregistration.k8s.io" => apiregistration::validate(kind, w, obj),
        _ => Vec::new(),
    }
}

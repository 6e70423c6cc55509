//! The built-in Kubernetes 1.34 catalog: the embedded `catalog.json` plus
//! the per-resource strategies of the built-in resources, which are code
//! in kube-apiserver (`pkg/registry/<group>/<resource>/strategy.go` and
//! the field-label conversion functions) and so are filled in here.

use std::collections::BTreeMap;

use crate::resource::ResourceInfo;
use crate::schema::Schema;
use crate::strategy::{GracefulDeletion, ScalePaths, StatusPolicy, Strategy};

/// The generated catalog file, embedded at build time.
pub(crate) const CATALOG_JSON: &str = include_str!("../data/catalog.json");

/// The strategy of the built-in resource `r`.
pub(crate) fn strategy(r: &ResourceInfo, definitions: &BTreeMap<String, Schema>) -> Strategy {
    let (group, plural) = (r.group.as_str(), r.plural.as_str());
    let core = group.is_empty();
    let is_pod = core && plural == "pods";
    Strategy {
        // kube's registries with `ReturnDeletedObject: true` (and the
        // Service and Namespace REST, which return the object themselves).
        returns_deleted_object: (core
            && matches!(
                plural,
                "pods"
                    | "services"
                    | "namespaces"
                    | "serviceaccounts"
                    | "persistentvolumes"
                    | "persistentvolumeclaims"
                    | "resourcequotas"
            ))
            || (group == "storage.k8s.io" && plural == "storageclasses"),
        allow_create_on_update: matches!(
            (group, plural),
            ("", "endpoints")
                | ("", "events")
                | ("", "limitranges")
                | ("", "serviceaccounts")
                | ("events.k8s.io", "events")
                | ("coordination.k8s.io", "leases")
                | ("rbac.authorization.k8s.io", _)
        ),
        // The strategies whose `AllowUnconditionalUpdate` is false.
        requires_resource_version: matches!(
            (group, plural),
            (
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations"
                    | "validatingwebhookconfigurations"
                    | "validatingadmissionpolicies"
                    | "validatingadmissionpolicybindings"
                    | "mutatingadmissionpolicies"
                    | "mutatingadmissionpolicybindings"
            ) | ("apiextensions.k8s.io", "customresourcedefinitions")
                | ("apiregistration.k8s.io", "apiservices")
                | ("coordination.k8s.io", "leasecandidates")
        ),
        // A kind with a `spec` tracks `metadata.generation`.
        tracks_generation: definitions
            .get(&r.definition)
            .is_some_and(|d| d.properties.contains_key("spec")),
        status: status_policy(r, group, plural),
        graceful_deletion: if is_pod {
            GracefulDeletion::PodOnNode
        } else {
            GracefulDeletion::Immediate
        },
        scale: r.has_subresource("scale").then(ScalePaths::default),
        status_resets_metadata: status_resets_metadata(group, plural)
            .iter()
            .map(|f| (*f).to_owned())
            .collect(),
        selectable_fields: selectable_fields(group, plural)
            .map(|fs| fs.iter().map(|f| (*f).to_owned()).collect()),
    }
}

/// What the resource's create strategy does to `status`: kube resets it
/// (`PrepareForCreate`), to phase `Pending` for pods and, with the phase's
/// start time, for persistent volumes; nodes keep the request's.
fn status_policy(r: &ResourceInfo, group: &str, resource: &str) -> StatusPolicy {
    if !r.has_subresource("status") {
        return StatusPolicy::Plain;
    }
    match (group, resource) {
        ("", "pods") => StatusPolicy::PodPending,
        ("", "persistentvolumes") => StatusPolicy::PendingSinceCreate,
        ("", "nodes") => StatusPolicy::KeptOnCreate,
        _ => StatusPolicy::Subresource,
    }
}

/// The metadata a `/status` write cannot change: the apps workloads keep
/// their labels, pods their deletion timestamp and owners (kube's
/// `*StatusStrategy.PrepareForUpdate`); other status strategies reset only
/// `spec`.
fn status_resets_metadata(group: &str, resource: &str) -> &'static [&'static str] {
    match (group, resource) {
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets") => &["labels"],
        ("", "pods") => &["deletionTimestamp", "ownerReferences"],
        _ => &[],
    }
}

/// Resources with their own field-label conversion and the fields they
/// allow beyond `metadata.name` / `metadata.namespace` (the built-in
/// strategies' `selectable_fields`, readable without parsing the catalog).
pub fn selectable_fields(group: &str, resource: &str) -> Option<&'static [&'static str]> {
    if !group.is_empty() {
        return None;
    }
    Some(match resource {
        "pods" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        "nodes" => &["spec.unschedulable"],
        "replicationcontrollers" => &["status.replicas"],
        "events" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        "namespaces" => &["status.phase"],
        "secrets" => &["type"],
        "services" => &["spec.clusterIP", "spec.type"],
        _ => return None,
    })
}

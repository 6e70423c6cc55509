//! Defaulting: the values kube-apiserver fills in before validation, per
//! resource (`k8s.io/kubernetes/pkg/apis/*/v1/defaults.go` and the create
//! strategies), limited to what users see in `kubectl get -o yaml`.
//!
//! Each resource family has its own module; [`apply`] dispatches by group
//! and kind. Odd input (a spec that is not an object) is left alone: the
//! decode step has already rejected wrong types.

mod admissionregistration;
mod apiextensions;
mod apiregistration;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod core;
mod discovery;
mod flowcontrol;
mod job;
mod networking;
mod pod;
pub(crate) mod pvc;
mod rbac;
mod resource;
mod scheduling;
mod service_update;
mod storage;

use serde_json::{Map, Value};

use keelson_api::{Operation, UserInfo};

/// Apply the defaults of `group`/`kind` to `obj`; `old` is the stored
/// object on update, `subresource` the request's (`status`, `finalize`).
pub(crate) fn apply(
    group: &str,
    kind: &str,
    op: Operation,
    subresource: &str,
    obj: &mut Value,
    old: Option<&Value>,
) {
    match (group, kind) {
        ("", "Pod") => pod::pod(obj, op, subresource),
        ("", "PodTemplate") => pod::template_at(obj, &["template"], true),
        ("", "ReplicationController") => core::replication_controller(obj),
        ("", "Service") => {
            core::service(obj);
            if let Some(old) = old.filter(|_| op == Operation::Update && subresource.is_empty()) {
                service_update::drop_type_dependent_fields(obj, old);
            }
        }
        ("", "Namespace") => core::namespace(obj, op, subresource, old),
        ("", "Secret") => core::secret(obj),
        ("", "PersistentVolume") => core::persistent_volume(obj, op, subresource, old),
        ("", "PersistentVolumeClaim") => core::persistent_volume_claim(obj),
        ("", "Endpoints") => core::endpoints(obj),
        ("", "Node") => core::node(obj, op, subresource, old),
        ("", "LimitRange") => core::limit_range(obj, op),
        ("", "ServiceAccount") => core::service_account(obj),
        ("apps", "Deployment") => apps::deployment(obj),
        ("apps", "ReplicaSet") => apps::replica_set(obj),
        ("apps", "StatefulSet") => apps::stateful_set(obj),
        ("apps", "DaemonSet") => apps::daemon_set(obj),
        ("batch", "Job") => batch::job(obj),
        ("batch", "CronJob") => batch::cron_job(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler(obj),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            apiextensions::custom_resource_definition(obj)
        }
        ("networking.k8s.io", "NetworkPolicy") => networking::network_policy(obj),
        ("networking.k8s.io", "IngressClass") => networking::ingress_class(obj),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => rbac::binding(obj),
        ("storage.k8s.io", "StorageClass") => storage::storage_class(obj),
        ("storage.k8s.io", "CSIDriver") => storage::csi_driver(obj),
        ("storage.k8s.io", "VolumeAttachment") => storage::volume_attachment(obj),
        ("scheduling.k8s.io", "PriorityClass") => scheduling::priority_class(obj),
        ("discovery.k8s.io", "EndpointSlice") => discovery::endpoint_slice(obj),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            admissionregistration::mutating_webhook_configuration(obj)
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            admissionregistration::validating_webhook_configuration(obj)
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            admissionregistration::validating_admission_policy(obj)
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            admissionregistration::validating_admission_policy_binding(obj)
        }
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy") => {
            admissionregistration::mutating_admission_policy(obj)
        }
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding") => {
            admissionregistration::mutating_admission_policy_binding(obj)
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flowcontrol::flow_schema(obj),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            flowcontrol::priority_level_configuration(obj)
        }
        ("resource.k8s.io", "ResourceClaim") => resource::resource_claim(obj),
        ("resource.k8s.io", "ResourceClaimTemplate") => resource::resource_claim_template(obj),
        ("resource.k8s.io", "ResourceSlice") => resource::resource_slice(obj),
        ("apiregistration.k8s.io", "APIService") => apiregistration::api_service(obj),
        _ => {}
    }
}

/// The registry strategies' `PrepareForCreate`/`PrepareForUpdate` steps
/// that kube runs in the store, after mutating admission and before
/// validation: a Job's generated selector, a CertificateSigningRequest's
/// requester, a HorizontalPodAutoscaler's gated `tolerance`. `user` is who
/// asked (after impersonation).
pub(crate) fn prepare(
    group: &str,
    kind: &str,
    op: Operation,
    subresource: &str,
    obj: &mut Value,
    old: Option<&Value>,
    user: Option<&UserInfo>,
) {
    if !subresource.is_empty() {
        return;
    }
    match (group, kind, op, old) {
        ("batch", "Job", Operation::Create, _) => job::generate_selector(obj),
        ("", "PersistentVolumeClaim", Operation::Create | Operation::Update, old) => {
            pvc::data_sources(obj, old)
        }
        ("apps", "DaemonSet", Operation::Create | Operation::Update, old) => {
            apps::daemon_set_template_generation(obj, old)
        }
        ("certificates.k8s.io", "CertificateSigningRequest", Operation::Create, _) => {
            certificates::prepare_create(obj, user)
        }
        ("certificates.k8s.io", "CertificateSigningRequest", Operation::Update, Some(old)) => {
            certificates::prepare_update(obj, old)
        }
        ("storage.k8s.io", "CSIDriver", Operation::Create | Operation::Update, old) => {
            storage::drop_disabled_csi_driver_fields(obj, old)
        }
        ("autoscaling", "HorizontalPodAutoscaler", Operation::Create | Operation::Update, old) => {
            autoscaling::drop_disabled_hpa_fields(obj, old)
        }
        _ => {}
    }
}

/// The object at `path` below `v`, if every step is an object.
pub(super) fn object_at<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object_mut()?.get_mut(*key)?;
    }
    cur.as_object_mut()
}

/// The object at `key`, created (as `{}`) when absent or null.
pub(super) fn child<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// Set `key` when it is absent or null (Go: a nil pointer).
pub(super) fn or_set(m: &mut Map<String, Value>, key: &str, v: impl Into<Value>) {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = v.into();
    }
}

/// Set `key` when it is absent, null or `""` (Go: an empty string).
pub(super) fn or_set_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() || slot.as_str() == Some("") {
        *slot = Value::String(v.into());
    }
}

/// Each object element of the array at `key`.
pub(super) fn each<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    m.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

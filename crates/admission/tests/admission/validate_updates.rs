//! Update and status validation (`ValidateObjectMetaUpdate`,
//! `Validate<Kind>StatusUpdate`) and the core cluster kinds and webhook
//! configurations: kube's exact messages, and valid objects that pass.

use keelson_api::{AdmissionApi, AdmissionRequest};
use serde_json::{json, Value};

use crate::support::{admission, create, message, update};

const ARG: &str = "admissionregistration.k8s.io";

fn status(group: &str, resource: &str, ns: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = update(group, resource, ns, old, new);
    req.subresource = "status".into();
    req
}

async fn passes(req: AdmissionRequest) {
    let adm = admission().await;
    if let Err(e) = adm.admit(req).await {
        panic!("refused: {}", e.message);
    }
}

fn cm(meta: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}})
}

#[tokio::test]
async fn metadata_update_rules() {
    let old = cm(
        json!({"name": "a", "namespace": "default", "uid": "u-1", "resourceVersion": "5",
        "creationTimestamp": "2026-01-01T00:00:00Z"}),
    );
    let new = cm(json!({"name": "a", "namespace": "default", "uid": "u-2"}));
    assert_eq!(
        message(update("", "configmaps", "default", old.clone(), new)).await,
        r#"ConfigMap "a" is invalid: metadata.uid: Invalid value: "u-2": field is immutable"#
    );
    // An empty uid and another creationTimestamp are taken from the
    // stored object, as kube's BeforeUpdate does.
    let new = cm(
        json!({"name": "a", "namespace": "default", "creationTimestamp": "2020-01-01T00:00:00Z"}),
    );
    passes(update("", "configmaps", "default", old.clone(), new)).await;
    let new = cm(json!({"name": "a", "namespace": "default",
        "deletionTimestamp": "2026-01-02T03:04:05Z", "deletionGracePeriodSeconds": 30}));
    assert_eq!(
        message(update("", "configmaps", "default", old, new)).await,
        "ConfigMap \"a\" is invalid: [metadata.deletionTimestamp: Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable, metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable]"
    );
}

fn pod(status: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}],
            "initContainers": [{"name": "side", "image": "busybox", "restartPolicy": "Always"}]},
        "status": status})
}

#[tokio::test]
async fn pod_status_updates() {
    let terminated = json!({"terminated": {"exitCode": 0}});
    let old = pod(json!({"qosClass": "BestEffort",
        "containerStatuses": [{"name": "c", "state": terminated}],
        "initContainerStatuses": [{"name": "side", "state": terminated}]}));
    let new = pod(
        json!({"qosClass": "Guaranteed", "nominatedNodeName": "Node_1",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "bad type", "status": "True"}],
        "containerStatuses": [{"name": "c", "state": {"running": {}}}],
        "initContainerStatuses": [{"name": "side", "state": {"running": {}}}]}),
    );
    let msg = message(status("", "pods", "default", old.clone(), new)).await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [metadata.conditions[1].Type: Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), status.nominatedNodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), status.qosClass: Invalid value: \"Guaranteed\": field is immutable, status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state]"
    );
    // An empty qosClass keeps the stored one; a sidecar may restart.
    let new = pod(
        json!({"containerStatuses": [{"name": "c", "state": terminated}],
        "initContainerStatuses": [{"name": "side", "state": {"running": {}}}]}),
    );
    passes(status("", "pods", "default", old, new)).await;
}

#[tokio::test]
async fn namespace_and_pvc_status_updates() {
    let ns = |phase: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}, "status": {"phase": phase}});
    assert_eq!(
        message(status("", "namespaces", "", ns("Active"), ns("Terminating"))).await,
        "Namespace \"team\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
    );
    passes(status("", "namespaces", "", ns("Active"), ns("Active"))).await;
    let pvc = |cap: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound", "capacity": {"storage": cap}}})
    };
    assert_eq!(
        message(status("", "persistentvolumeclaims", "default", pvc("1Gi"), pvc("-1.5"))).await,
        "PersistentVolumeClaim \"c\" is invalid: status.capacity[storage]: Invalid value: -2: must be a valid resource quantity"
    );
    passes(status(
        "",
        "persistentvolumeclaims",
        "default",
        pvc("1Gi"),
        pvc("2Gi"),
    ))
    .await;
}

fn node(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": spec})
}

#[tokio::test]
async fn node_rules() {
    let bad = node(json!({"podCIDRs": ["10.0.0.0/24", "10.0.0.0/24"],
        "taints": [{"key": "k", "effect": "Sometimes"}, {"key": "k", "effect": "Sometimes"}]}));
    assert_eq!(
        message(create("", "nodes", "", bad)).await,
        "Node \"n1\" is invalid: [metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\", metadata.taints[1].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\", metadata.taints[1]: Duplicate value: {\"Key\":\"k\",\"Value\":\"\",\"Effect\":\"Sometimes\",\"TimeAdded\":null}: taints must be unique by key and effect pair, spec.podCIDRs: Invalid value: [\"10.0.0.0/24\",\"10.0.0.0/24\"]: may specify no more than one CIDR for each IP family, spec.podCIDRs[1]: Duplicate value: \"10.0.0.0/24\"]"
    );
    let old = node(json!({"podCIDRs": ["10.0.0.0/24"], "providerID": "aws://a"}));
    let new = node(json!({"podCIDRs": ["10.0.1.0/24"], "providerID": "aws://b"}));
    assert_eq!(
        message(update("", "nodes", "", old.clone(), new)).await,
        "Node \"n1\" is invalid: [spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid, spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid]"
    );
    let new = node(
        json!({"podCIDRs": ["10.0.0.0/24"], "providerID": "aws://a", "unschedulable": true,
        "taints": [{"key": "node.kubernetes.io/maintenance", "effect": "NoSchedule"}]}),
    );
    passes(update("", "nodes", "", old, new)).await;
}

#[tokio::test]
async fn node_and_quota_values_render_as_kube_134_json() {
    // kube 1.34 prints a non-scalar BadValue with json.Marshal; internal
    // structs without JSON tags (core.Taint, core.NodeAddress) keep Go's
    // field names.
    let taint = json!({"key": "k", "value": "v", "effect": "NoExecute", "timeAdded": "2024-01-02T03:04:05Z"});
    let bad = node(json!({"taints": [taint.clone(), taint]}));
    assert_eq!(
        message(create("", "nodes", "", bad)).await,
        "Node \"n1\" is invalid: metadata.taints[1]: Duplicate value: {\"Key\":\"k\",\"Value\":\"v\",\"Effect\":\"NoExecute\",\"TimeAdded\":\"2024-01-02T03:04:05Z\"}: taints must be unique by key and effect pair"
    );
    let addr = json!({"type": "InternalIP", "address": "10.0.0.1"});
    let mut new = node(json!({}));
    new["status"] = json!({"addresses": [addr.clone(), addr]});
    assert_eq!(
        message(update("", "nodes", "", node(json!({})), new)).await,
        "Node \"n1\" is invalid: status.addresses[1]: Duplicate value: {\"Type\":\"InternalIP\",\"Address\":\"10.0.0.1\"}"
    );
    let old = quota(json!({"hard": {"pods": "10"}, "scopes": ["Terminating"]}));
    let new = quota(json!({"hard": {"pods": "10"}}));
    assert_eq!(
        message(update("", "resourcequotas", "default", old, new)).await,
        "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: null: field is immutable"
    );
    let sel = quota(
        json!({"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "Exists", "values": ["high", "low"]}]}}),
    );
    assert_eq!(
        message(create("", "resourcequotas", "default", sel)).await,
        "ResourceQuota \"q\" is invalid: spec.scopeSelector.matchExpressions.values: Invalid value: [\"high\",\"low\"]: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
    );
}

fn quota(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"}, "spec": spec})
}

#[tokio::test]
async fn resource_quota_and_limit_range_rules() {
    let bad = quota(
        json!({"hard": {"cpus": "1", "pods": "-1"}, "scopes": ["BestEffort", "NotBestEffort"]}),
    );
    assert_eq!(
        message(create("", "resourcequotas", "default", bad)).await,
        "ResourceQuota \"q\" is invalid: [spec.hard[cpus]: Invalid value: \"cpus\": must be a standard resource type or fully qualified, spec.hard[cpus]: Invalid value: \"cpus\": must be a standard resource for quota, spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0, spec.scopes: Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes]"
    );
    let old = quota(json!({"hard": {"pods": "10"}, "scopes": ["NotTerminating"]}));
    let new = quota(json!({"hard": {"pods": "20"}, "scopes": ["Terminating"]}));
    assert_eq!(
        message(update("", "resourcequotas", "default", old.clone(), new)).await,
        "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: [\"Terminating\"]: field is immutable"
    );
    let new = quota(
        json!({"hard": {"pods": "20", "requests.cpu": "4", "count/deployments.apps": "5"}, "scopes": ["NotTerminating"]}),
    );
    passes(update("", "resourcequotas", "default", old, new)).await;

    let lr = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "default"},
        "spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}, {"type": "Pod"},
            {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}, {"type": "Nodes"}]}});
    assert_eq!(
        message(create("", "limitranges", "default", lr)).await,
        "LimitRange \"l\" is invalid: [spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod', spec.limits[1].type: Duplicate value: \"Pod\", spec.limits[2].limits: Required value: either minimum or maximum storage value is required, but neither was provided, spec.limits[3].type: Invalid value: \"Nodes\": must be a standard limit type or fully qualified]"
    );
}

#[tokio::test]
async fn limit_range_comparisons() {
    let lr = |limits: Value| {
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "default"},
            "spec": {"limits": limits}})
    };
    // Per resource (in name order; kube: Go map order) and in kube's order
    // of checks; a Container limit's default and defaultRequest are first
    // defaulted from max and min. The bad value is the canonical quantity
    // (`default` reports the min or max value, as kube does).
    let bad = lr(json!([
        {"type": "Container",
         "max": {"cpu": "1", "memory": "1Gi"}, "min": {"cpu": "2", "memory": "512Mi"},
         "default": {"memory": "2048Mi", "example.com/gpu": "2"},
         "defaultRequest": {"memory": "256Mi", "example.com/gpu": "1"},
         "maxLimitRequestRatio": {"cpu": "500m", "memory": "4"}},
        {"type": "Pod", "max": {"cpu": "2"}, "min": {"cpu": "3"}, "maxLimitRequestRatio": {"cpu": "2"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "10Gi"}, "max": {"storage": "5Gi"}}]));
    assert_eq!(
        message(create("", "limitranges", "default", bad)).await,
        "LimitRange \"l\" is invalid: [\
spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1, \
spec.limits[0].defaultRequest[cpu]: Invalid value: \"1\": min value 2 is greater than default request value 1, \
spec.limits[0].default[cpu]: Invalid value: \"2\": min value 2 is greater than default value 1, \
spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: \"500m\": ratio 500m is less than 1, \
spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: \"1\": default value 2 must equal to defaultRequest value 1 in example.com/gpu, \
spec.limits[0].defaultRequest[memory]: Invalid value: \"256Mi\": min value 512Mi is greater than default request value 256Mi, \
spec.limits[0].default[memory]: Invalid value: \"1Gi\": default value 2Gi is greater than max value 1Gi, \
spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: \"4\": ratio 4 is greater than max/min = 2.000000, \
spec.limits[1].min[cpu]: Invalid value: \"3\": min value 3 is greater than max value 2, \
spec.limits[1].maxLimitRequestRatio[cpu]: Invalid value: \"2\": ratio 2 is greater than max/min = 0.666667, \
spec.limits[2].min[storage]: Invalid value: \"10Gi\": min value 10Gi is greater than max value 5Gi]"
    );
    let request_over_default = lr(json!([{"type": "Container",
        "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "800m"}, "max": {"cpu": "0.7"}}]));
    assert_eq!(
        message(create("", "limitranges", "default", request_over_default)).await,
        "LimitRange \"l\" is invalid: [spec.limits[0].defaultRequest[cpu]: Invalid value: \"800m\": default request value 800m is greater than max value 700m, spec.limits[0].defaultRequest[cpu]: Invalid value: \"800m\": default request value 800m is greater than default limit value 500m]"
    );
    // A ratio within max/min, and equal hugepages defaults, pass.
    let good = lr(
        json!([{"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "250m"},
        "maxLimitRequestRatio": {"cpu": "2.5"},
        "default": {"hugepages-2Mi": "4Mi"}, "defaultRequest": {"hugepages-2Mi": "4Mi"}}]),
    );
    passes(create("", "limitranges", "default", good)).await;
}

#[tokio::test]
async fn pvc_status_resize_fields() {
    let pvc = |status: Value| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": status})
    };
    let old = pvc(json!({"phase": "Bound", "capacity": {"storage": "1Gi"}}));
    // RecoverVolumeExpansionFailure is GA in 1.34: the allocated resources
    // and their resize statuses are checked (kube names the status map
    // `allocatedResourceStatus` and reports its key).
    let bad = pvc(json!({"phase": "Bound", "capacity": {"storage": "-500m"},
        "allocatedResourceStatuses": {"storage": "Resizing"},
        "allocatedResources": {"cpu": "1", "storage": "-1"}}));
    assert_eq!(
        message(status("", "persistentvolumeclaims", "default", old.clone(), bad)).await,
        "PersistentVolumeClaim \"c\" is invalid: [status.capacity[storage]: Invalid value: -1: must be a valid resource quantity, status.allocatedResourceStatus: Unsupported value: \"storage\": supported values: \"ControllerResizeInProgress\", \"ControllerResizeInfeasible\", \"NodeResizeInProgress\", \"NodeResizeInfeasible\", \"NodeResizePending\", status.allocatedResources: Unsupported value: \"cpu\": supported values: \"storage\", status.allocatedResources[storage]: Invalid value: -1: must be a valid resource quantity]"
    );
    let good = pvc(json!({"phase": "Bound", "capacity": {"storage": "1Gi"},
        "allocatedResourceStatuses": {"storage": "ControllerResizeInProgress"},
        "allocatedResources": {"storage": "2Gi"}}));
    passes(status("", "persistentvolumeclaims", "default", old, good)).await;
}

fn webhook(hook: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "w"}, "webhooks": [hook]})
}

#[tokio::test]
async fn webhook_configuration_mistakes() {
    let bad = webhook(json!({"name": "check", "timeoutSeconds": 31,
        "rules": [{"operations": ["CREATE", "*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*", "pods"]}],
        "clientConfig": {"url": "http://hooks.example.com/check?x=1"}}));
    assert_eq!(
        message(create(ARG, "validatingwebhookconfigurations", "", bad)).await,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"w\" is invalid: [webhooks[0].name: Invalid value: \"check\": should be a domain with at least three segments separated by dots, webhooks[0].rules[0].operations: Invalid value: [\"CREATE\",\"*\"]: if '*' is present, must not specify other operations, webhooks[0].rules[0].resources: Invalid value: [\"*\",\"pods\"]: if '*' is present, must not specify other resources without subresources, webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: \"x=1\": query parameters are not permitted in the URL, webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]"
    );
    let both = webhook(
        json!({"name": "check.example.com", "sideEffects": "Some", "admissionReviewVersions": ["v2"],
        "clientConfig": {"service": {"path": "/a//b"}}}),
    );
    let msg = message(create(ARG, "validatingwebhookconfigurations", "", both)).await;
    assert_eq!(
        msg,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"w\" is invalid: [webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\", webhooks[0].clientConfig.service.name: Required value, webhooks[0].clientConfig.service.namespace: Required value, webhooks[0].clientConfig.service.path: Invalid value: \"/a//b\": segment[1] may not be empty, webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1]"
    );
    let neither = webhook(json!({"name": "check.example.com", "sideEffects": "None",
        "admissionReviewVersions": ["v1"], "clientConfig": {}}));
    assert_eq!(
        message(create(ARG, "validatingwebhookconfigurations", "", neither)).await,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"w\" is invalid: webhooks[0].clientConfig: Required value: exactly one of url or service is required"
    );
}

/// Kinds whose own rules report every required field get no extra schema
/// `Required value` where kube reports the field at another path.
#[tokio::test]
async fn webhook_rule_lists_render_as_kube_134_json() {
    let bad = webhook(json!({"name": "check.example.com", "sideEffects": "None",
        "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://hooks.example.com/check"},
        "rules": [{"operations": ["*"], "apiGroups": ["*", "apps"], "apiVersions": ["v1"], "resources": ["*/*", "pods"]}]}));
    assert_eq!(
        message(create(ARG, "validatingwebhookconfigurations", "", bad)).await,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"w\" is invalid: [webhooks[0].rules[0].apiGroups: Invalid value: [\"*\",\"apps\"]: if '*' is present, must not specify other API groups, webhooks[0].rules[0].resources: Invalid value: [\"*/*\",\"pods\"]: if '*/*' is present, must not specify other resources]"
    );
}

#[tokio::test]
async fn required_fields_only_as_kube_reports_them() {
    let bad = node(json!({"taints": [{"key": "k"}]}));
    assert_eq!(
        message(create("", "nodes", "", bad)).await,
        "Node \"n1\" is invalid: metadata.taints[0].effect: Required value"
    );
    let half = webhook(json!({"name": "check.example.com", "sideEffects": "None",
        "admissionReviewVersions": ["v1"], "clientConfig": {"service": {"name": "hook"}}}));
    assert_eq!(
        message(create(ARG, "validatingwebhookconfigurations", "", half)).await,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"w\" is invalid: webhooks[0].clientConfig.service.name: Required value"
    );
}

#[tokio::test]
async fn valid_cluster_objects_pass_create_and_update() {
    let objects: Vec<(&str, &str, &str, Value)> = vec![
        (
            "",
            "nodes",
            "",
            node(
                json!({"podCIDRs": ["10.244.0.0/24", "fd00::/64"], "providerID": "kind://docker/kind/n1",
            "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}),
            ),
        ),
        (
            "",
            "resourcequotas",
            "default",
            quota(
                json!({"hard": {"requests.cpu": "4", "requests.memory": "8Gi",
            "limits.cpu": "8", "pods": "20", "services.loadbalancers": "0", "count/jobs.batch": "10",
            "gold.storageclass.storage.k8s.io/requests.storage": "100Gi", "requests.nvidia.com/gpu": "2"},
            "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}),
            ),
        ),
        (
            "",
            "limitranges",
            "default",
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "default"},
            "spec": {"limits": [
                {"type": "Container", "default": {"cpu": "500m", "memory": "512Mi"}, "defaultRequest": {"cpu": "100m"},
                 "max": {"cpu": "2"}, "min": {"cpu": "50m"}, "maxLimitRequestRatio": {"cpu": "10"}},
                {"type": "Pod", "max": {"memory": "4Gi"}},
                {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "100Gi"}}]}}),
        ),
        (
            "",
            "serviceaccounts",
            "default",
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "builder", "namespace": "default"}, "automountServiceAccountToken": false,
            "imagePullSecrets": [{"name": "regcred"}]}),
        ),
        (
            ARG,
            "validatingwebhookconfigurations",
            "",
            webhook(json!({"name": "pods.policy.example.com",
            "sideEffects": "None", "admissionReviewVersions": ["v1", "v1beta1"], "failurePolicy": "Ignore",
            "timeoutSeconds": 5, "matchPolicy": "Exact",
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["", "apps"], "apiVersions": ["v1"],
                "resources": ["pods", "pods/status", "deployments/*"], "scope": "Namespaced"}],
            "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
            "clientConfig": {"service": {"name": "hook", "namespace": "system", "path": "/validate-v1-pod", "port": 9443},
                "caBundle": "Y2E="}})),
        ),
        (
            ARG,
            "mutatingwebhookconfigurations",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": "m"},
            "webhooks": [{"name": "inject.sidecar.example.com", "sideEffects": "NoneOnDryRun",
                "admissionReviewVersions": ["v1"], "reinvocationPolicy": "IfNeeded",
                "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
                "clientConfig": {"url": "https://hooks.example.com:8443/mutate"}}]}),
        ),
    ];
    let adm = admission().await;
    for (group, resource, ns, obj) in objects {
        let created = adm
            .admit(create(group, resource, ns, obj.clone()))
            .await
            .unwrap_or_else(|e| panic!("{resource} refused on create: {}", e.message))
            .object
            .expect("an admitted object");
        adm.admit(update(group, resource, ns, created, obj))
            .await
            .unwrap_or_else(|e| panic!("{resource} refused on update: {}", e.message));
    }
}

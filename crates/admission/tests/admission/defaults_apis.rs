//! Defaulting of the API-machinery groups as seen in `kubectl get -o yaml`:
//! admission registration, flow control, dynamic resource allocation and
//! API services.

use keelson_api::AdmissionApi;
use serde_json::{json, Value};

use crate::support::{admission, create};

/// The admitted object of a create of `obj` as `group`/`resource`.
async fn admitted(group: &str, resource: &str, namespace: &str, obj: Value) -> Value {
    admission()
        .await
        .admit(create(group, resource, namespace, obj))
        .await
        .unwrap()
        .object
        .unwrap()
}

#[tokio::test]
async fn validating_webhook_configuration_defaults() {
    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "vwc"},
        "webhooks": [
            {"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "clientConfig": {"service": {"name": "svc", "namespace": "default"}},
             "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                        "resources": ["pods"]}]},
            {"name": "b.example.com", "sideEffects": "NoneOnDryRun", "admissionReviewVersions": ["v1"],
             "clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 8443}},
             "failurePolicy": "Ignore", "matchPolicy": "Exact",
             "namespaceSelector": {"matchLabels": {"team": "a"}},
             "objectSelector": {"matchLabels": {"app": "b"}}, "timeoutSeconds": 5,
             "rules": [{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                        "resources": ["deployments"], "scope": "Namespaced"}]}]});
    let o = admitted(
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "",
        obj,
    )
    .await;
    let a = &o["webhooks"][0];
    assert_eq!(a["failurePolicy"], "Fail");
    assert_eq!(a["matchPolicy"], "Equivalent");
    assert_eq!(a["namespaceSelector"], json!({}));
    assert_eq!(a["objectSelector"], json!({}));
    assert_eq!(a["timeoutSeconds"], 10);
    assert_eq!(a["rules"][0]["scope"], "*");
    assert_eq!(a["clientConfig"]["service"]["port"], 443);
    assert!(a.get("reinvocationPolicy").is_none());
    let b = &o["webhooks"][1];
    assert_eq!(b["failurePolicy"], "Ignore");
    assert_eq!(b["matchPolicy"], "Exact");
    assert_eq!(
        b["namespaceSelector"],
        json!({"matchLabels": {"team": "a"}})
    );
    assert_eq!(b["objectSelector"], json!({"matchLabels": {"app": "b"}}));
    assert_eq!(b["timeoutSeconds"], 5);
    assert_eq!(b["rules"][0]["scope"], "Namespaced");
    assert_eq!(b["clientConfig"]["service"]["port"], 8443);
    assert_eq!(b["sideEffects"], "NoneOnDryRun");
}

#[tokio::test]
async fn mutating_webhook_configuration_defaults() {
    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration", "metadata": {"name": "mwc"},
        "webhooks": [
            {"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "clientConfig": {"url": "https://hook.example.com/mutate"}},
            {"name": "b.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
             "clientConfig": {"url": "https://hook.example.com/mutate"},
             "reinvocationPolicy": "IfNeeded"}]});
    let o = admitted(
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "",
        obj,
    )
    .await;
    let a = &o["webhooks"][0];
    assert_eq!(a["failurePolicy"], "Fail");
    assert_eq!(a["matchPolicy"], "Equivalent");
    assert_eq!(a["namespaceSelector"], json!({}));
    assert_eq!(a["objectSelector"], json!({}));
    assert_eq!(a["timeoutSeconds"], 10);
    assert_eq!(a["reinvocationPolicy"], "Never");
    assert_eq!(
        a["clientConfig"],
        json!({"url": "https://hook.example.com/mutate"})
    );
    assert_eq!(o["webhooks"][1]["reinvocationPolicy"], "IfNeeded");
}

#[tokio::test]
async fn validating_admission_policy_defaults() {
    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "replicas"},
        "spec": {"matchConstraints": {
                     "resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"],
                                        "apiVersions": ["v1"], "resources": ["deployments"]}],
                     "excludeResourceRules": [{"operations": ["*"], "apiGroups": ["apps"],
                                               "apiVersions": ["v1"], "resources": ["deployments"],
                                               "scope": "Cluster"}]},
                 "validations": [{"expression": "object.spec.replicas <= 5"}]}});
    let o = admitted(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        "",
        obj,
    )
    .await;
    let spec = &o["spec"];
    assert_eq!(spec["failurePolicy"], "Fail");
    let m = &spec["matchConstraints"];
    assert_eq!(m["matchPolicy"], "Equivalent");
    assert_eq!(m["namespaceSelector"], json!({}));
    assert_eq!(m["objectSelector"], json!({}));
    assert_eq!(m["resourceRules"][0]["scope"], "*");
    assert_eq!(m["excludeResourceRules"][0]["scope"], "Cluster");

    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "ignored"},
        "spec": {"failurePolicy": "Ignore",
                 "matchConstraints": {"matchPolicy": "Exact",
                     "namespaceSelector": {"matchLabels": {"a": "b"}},
                     "resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                        "apiVersions": ["v1"], "resources": ["pods"]}]},
                 "validations": [{"expression": "true"}]}});
    let o = admitted(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        "",
        obj,
    )
    .await;
    assert_eq!(o["spec"]["failurePolicy"], "Ignore");
    assert_eq!(o["spec"]["matchConstraints"]["matchPolicy"], "Exact");
    assert_eq!(
        o["spec"]["matchConstraints"]["namespaceSelector"],
        json!({"matchLabels": {"a": "b"}})
    );
    assert_eq!(o["spec"]["matchConstraints"]["objectSelector"], json!({}));
}

#[tokio::test]
async fn validating_admission_policy_binding_defaults() {
    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "replicas"},
        "spec": {"policyName": "replicas", "validationActions": ["Deny"],
                 "paramRef": {"name": "limits", "namespace": "default",
                              "parameterNotFoundAction": "Deny"},
                 "matchResources": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                                       "apiVersions": ["v1"], "resources": ["deployments"]}]}}});
    let o = admitted(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        "",
        obj,
    )
    .await;
    let m = &o["spec"]["matchResources"];
    assert_eq!(m["matchPolicy"], "Equivalent");
    assert_eq!(m["namespaceSelector"], json!({}));
    assert_eq!(m["objectSelector"], json!({}));
    assert_eq!(m["resourceRules"][0]["scope"], "*");
    assert_eq!(
        o["spec"]["paramRef"],
        json!({"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"})
    );

    // No matchResources: none is made up.
    let obj = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "plain"},
        "spec": {"policyName": "replicas", "validationActions": ["Warn"]}});
    let o = admitted(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        "",
        obj,
    )
    .await;
    assert!(o["spec"].get("matchResources").is_none());
}

#[tokio::test]
async fn flow_schema_defaults() {
    let schema = |name: &str, spec: Value| {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
               "metadata": {"name": name}, "spec": spec})
    };
    let plc = json!({"name": "workload-low"});
    let o = admitted(
        "flowcontrol.apiserver.k8s.io",
        "flowschemas",
        "",
        schema(
            "unset",
            json!({"priorityLevelConfiguration": plc, "distinguisherMethod": {"type": "ByUser"}}),
        ),
    )
    .await;
    assert_eq!(o["spec"]["matchingPrecedence"], 1000);
    let o = admitted(
        "flowcontrol.apiserver.k8s.io",
        "flowschemas",
        "",
        schema(
            "zero",
            json!({"priorityLevelConfiguration": plc, "matchingPrecedence": 0}),
        ),
    )
    .await;
    assert_eq!(o["spec"]["matchingPrecedence"], 1000);
    let o = admitted(
        "flowcontrol.apiserver.k8s.io",
        "flowschemas",
        "",
        schema(
            "set",
            json!({"priorityLevelConfiguration": plc, "matchingPrecedence": 200}),
        ),
    )
    .await;
    assert_eq!(o["spec"]["matchingPrecedence"], 200);
}

#[tokio::test]
async fn priority_level_configuration_defaults() {
    let level = |name: &str, spec: Value| {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
               "kind": "PriorityLevelConfiguration", "metadata": {"name": name}, "spec": spec})
    };
    let create_level = |name: &'static str, spec: Value| {
        admitted(
            "flowcontrol.apiserver.k8s.io",
            "prioritylevelconfigurations",
            "",
            level(name, spec),
        )
    };
    let o = create_level(
        "queuing",
        json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
    )
    .await;
    assert_eq!(
        o["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
               "limitResponse": {"type": "Queue",
                                 "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}})
    );

    // v1 keeps an explicit zero share count; queuing's plain integers do not.
    let o = create_level(
        "explicit",
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "lendablePercent": 10,
               "borrowingLimitPercent": 20,
               "limitResponse": {"type": "Queue",
                                 "queuing": {"queues": 0, "handSize": 4, "queueLengthLimit": 100}}}}),
    )
    .await;
    let limited = &o["spec"]["limited"];
    assert_eq!(limited["nominalConcurrencyShares"], 0);
    assert_eq!(limited["lendablePercent"], 10);
    assert_eq!(limited["borrowingLimitPercent"], 20);
    assert_eq!(
        limited["limitResponse"]["queuing"],
        json!({"queues": 64, "handSize": 4, "queueLengthLimit": 100})
    );

    let o = create_level(
        "reject",
        json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}),
    )
    .await;
    assert_eq!(
        o["spec"]["limited"]["limitResponse"],
        json!({"type": "Reject"})
    );

    let o = create_level("exempt", json!({"type": "Exempt", "exempt": {}})).await;
    assert_eq!(
        o["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
    );
    let o = create_level(
        "exempt",
        json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 5}}),
    )
    .await;
    assert_eq!(
        o["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 5, "lendablePercent": 0})
    );
    assert!(o["spec"].get("limited").is_none());
}

#[tokio::test]
async fn resource_claim_defaults() {
    let obj = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "gpus"},
        "spec": {"devices": {"requests": [
            {"name": "one", "exactly": {"deviceClassName": "gpu.example.com",
                                        "tolerations": [{"key": "maintenance", "effect": "NoSchedule"},
                                                        {"key": "dirty", "operator": "Exists"}]}},
            {"name": "all", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All"}},
            {"name": "three", "exactly": {"deviceClassName": "gpu.example.com", "count": 3}},
            {"name": "either", "firstAvailable": [
                {"name": "big", "deviceClassName": "big.example.com"},
                {"name": "small", "deviceClassName": "small.example.com", "count": 2}]}]}}});
    let o = admitted("resource.k8s.io", "resourceclaims", "default", obj).await;
    let r = &o["spec"]["devices"]["requests"];
    assert_eq!(r[0]["exactly"]["allocationMode"], "ExactCount");
    assert_eq!(r[0]["exactly"]["count"], 1);
    assert_eq!(
        r[0]["exactly"]["tolerations"],
        json!([{"key": "maintenance", "effect": "NoSchedule", "operator": "Equal"},
               {"key": "dirty", "operator": "Exists"}])
    );
    assert_eq!(r[1]["exactly"]["allocationMode"], "All");
    assert!(r[1]["exactly"].get("count").is_none());
    assert_eq!(r[2]["exactly"]["allocationMode"], "ExactCount");
    assert_eq!(r[2]["exactly"]["count"], 3);
    assert!(r[3].get("exactly").is_none());
    assert_eq!(r[3]["firstAvailable"][0]["allocationMode"], "ExactCount");
    assert_eq!(r[3]["firstAvailable"][0]["count"], 1);
    assert_eq!(r[3]["firstAvailable"][1]["count"], 2);
}

#[tokio::test]
async fn resource_claim_template_defaults() {
    let obj = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}});
    let o = admitted("resource.k8s.io", "resourceclaimtemplates", "default", obj).await;
    assert_eq!(
        o["spec"]["spec"]["devices"]["requests"][0]["exactly"],
        json!({"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1})
    );
}

#[tokio::test]
async fn resource_slice_and_device_class_defaults() {
    let obj = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu"},
        "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                 "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "taints": [
                     {"key": "maintenance", "effect": "NoSchedule"},
                     {"key": "broken", "effect": "NoExecute", "timeAdded": "2025-01-02T03:04:05Z"}]},
                             {"name": "gpu-1"}]}});
    let o = admitted("resource.k8s.io", "resourceslices", "", obj).await;
    let taints = &o["spec"]["devices"][0]["taints"];
    let added = taints[0]["timeAdded"].as_str().unwrap_or_default();
    assert_eq!(added.len(), "2025-01-02T03:04:05Z".len(), "{added}");
    assert!(added.ends_with('Z'), "{added}");
    assert_eq!(taints[1]["timeAdded"], "2025-01-02T03:04:05Z");
    assert!(o["spec"]["devices"][1].get("taints").is_none());

    let obj = json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}});
    let o = admitted("resource.k8s.io", "deviceclasses", "", obj).await;
    assert_eq!(
        o["spec"],
        json!({"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]})
    );
}

#[tokio::test]
async fn api_service_defaults() {
    let service = |name: &str, spec: Value| {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
               "metadata": {"name": name}, "spec": spec})
    };
    let o = admitted(
        "apiregistration.k8s.io",
        "apiservices",
        "",
        service(
            "v1beta1.metrics.k8s.io",
            json!({"group": "metrics.k8s.io", "version": "v1beta1",
                   "groupPriorityMinimum": 100, "versionPriority": 100,
                   "insecureSkipTLSVerify": true,
                   "service": {"name": "metrics-server", "namespace": "kube-system"}}),
        ),
    )
    .await;
    assert_eq!(
        o["spec"]["service"],
        json!({"name": "metrics-server", "namespace": "kube-system", "port": 443})
    );
    let o = admitted(
        "apiregistration.k8s.io",
        "apiservices",
        "",
        service(
            "v1alpha1.custom.example.com",
            json!({"group": "custom.example.com", "version": "v1alpha1",
                   "groupPriorityMinimum": 1000, "versionPriority": 15,
                   "insecureSkipTLSVerify": true,
                   "service": {"name": "custom", "namespace": "default", "port": 8443}}),
        ),
    )
    .await;
    assert_eq!(o["spec"]["service"]["port"], 8443);
    // A local APIService has no service to default.
    let o = admitted(
        "apiregistration.k8s.io",
        "apiservices",
        "",
        service(
            "v1.example.com",
            json!({"group": "example.com", "version": "v1",
                   "groupPriorityMinimum": 1000, "versionPriority": 15}),
        ),
    )
    .await;
    assert!(o["spec"].get("service").is_none());
}

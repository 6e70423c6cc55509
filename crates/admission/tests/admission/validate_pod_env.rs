//! Pod container env downward-API selectors (`validateObjectFieldSelector`,
//! `validateContainerResourceFieldSelector`) and volume mounts
//! (`ValidateVolumeMounts`): kube's exact messages, and realistic valid
//! pods that must pass.

use serde_json::{json, Value};

use crate::support::{admitted, create, message, pod};

async fn pod_message(spec: Value) -> String {
    message(create("", "pods", "default", pod(spec))).await
}

fn with_env(env: Value) -> Value {
    json!({"containers": [{"name": "c", "image": "i", "env": env}]})
}

const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

#[tokio::test]
async fn field_ref_paths() {
    let msg = pod_message(with_env(json!([
        {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}},
        {"name": "B", "valueFrom": {"fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}}},
        {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName['x']"}}},
        {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['bad key']"}}},
        {"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['A_']"}}},
        {"name": "F", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}},
        {"name": "G", "valueFrom": {"fieldRef": {"fieldPath": "foo"}}},
        {"name": "H", "valueFrom": {"fieldRef": {}}},
        {"name": "I", "valueFrom": {"fieldRef": {"fieldPath": "spec.host"}}}
    ])))
    .await;
    let p = "spec.containers[0].env";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [\
{p}[0].valueFrom.fieldRef.fieldPath: Unsupported value: \"status.phase\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\", \
{p}[1].valueFrom.fieldRef.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: unsupported pod version: v2, \
{p}[2].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.nodeName['x']\": error converting fieldPath: field label does not support subscript: spec.nodeName['x'], \
{p}[3].valueFrom.fieldRef: Invalid value: \"bad key\": {QUALIFIED}, \
{p}[4].valueFrom.fieldRef: Invalid value: \"a_\": {QUALIFIED}, \
{p}[5].valueFrom.fieldRef.fieldPath: Unsupported value: \"metadata.labels\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\", \
{p}[6].valueFrom.fieldRef.fieldPath: Invalid value: \"foo\": error converting fieldPath: field label not supported: foo, \
{p}[7].valueFrom.fieldRef.fieldPath: Required value]")
    );
}

#[tokio::test]
async fn resource_field_refs_and_divisors() {
    let msg = pod_message(with_env(json!([
        {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu", "divisor": "7"}}},
        {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1Mi"}}},
        {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory", "divisor": "2Mi"}}},
        {"name": "D", "valueFrom": {"resourceFieldRef": {"resource": "limits.ephemeral-storage", "divisor": "1m"}}},
        {"name": "E", "valueFrom": {"resourceFieldRef": {"resource": "limits.hugepages-2Mi", "divisor": "3"}}},
        {"name": "F", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": 0.5}}},
        {"name": "G", "valueFrom": {"resourceFieldRef": {"divisor": "1"}}},
        {"name": "H", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}},
        {"name": "I", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory", "divisor": "1024Ki"}}},
        {"name": "J", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}}
    ])))
    .await;
    let p = "spec.containers[0].env";
    let bytes = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [\
{p}[0].valueFrom.resourceFieldRef.resource: Unsupported value: \"limits.gpu\": supported values: \"limits.cpu\", \"limits.ephemeral-storage\", \"limits.memory\", \"requests.cpu\", \"requests.ephemeral-storage\", \"requests.memory\", \
{p}[1].valueFrom.resourceFieldRef.divisor: Invalid value: \"limits.cpu\": only divisor's values 1m and 1 are supported with the cpu resource, \
{p}[2].valueFrom.resourceFieldRef.divisor: Invalid value: \"requests.memory\": only divisor's values {bytes} are supported with the memory resource, \
{p}[3].valueFrom.resourceFieldRef.divisor: Invalid value: \"limits.ephemeral-storage\": only divisor's values {bytes} are supported with the local ephemeral storage resource, \
{p}[4].valueFrom.resourceFieldRef.divisor: Invalid value: \"limits.hugepages-2Mi\": only divisor's values {bytes} are supported with the hugepages resource, \
{p}[5].valueFrom.resourceFieldRef.divisor: Invalid value: \"requests.cpu\": only divisor's values 1m and 1 are supported with the cpu resource, \
{p}[6].valueFrom.resourceFieldRef.resource: Required value]")
    );
}

#[tokio::test]
async fn key_ref_names_and_file_key_ref() {
    let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let msg = pod_message(with_env(json!([
        {"name": "A", "valueFrom": {"configMapKeyRef": {"key": "k"}}},
        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "Bad_Name", "key": "k"}}},
        // EnvFiles is alpha and off in 1.34: the field is dropped, no source is left
        {"name": "C", "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "a.env", "key": "K"}}}
    ])))
    .await;
    let p = "spec.containers[0].env";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [\
{p}[0].valueFrom.configMapKeyRef.name: Invalid value: \"\": {subdomain}, \
{p}[1].valueFrom.secretKeyRef.name: Invalid value: \"Bad_Name\": {subdomain}, \
{p}[2].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`]")
    );
}

#[tokio::test]
async fn volume_mount_paths_propagation_and_read_only() {
    let msg = pod_message(json!({
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "emptyDir": {}}],
        "containers": [{"name": "c", "image": "i", "volumeMounts": [
            {"name": "data", "mountPath": "/a", "subPath": "/abs/../x"},
            {"name": "data", "mountPath": "/b", "subPath": "x", "subPathExpr": "$(POD)/.."},
            {"name": "cfg", "mountPath": "/a", "mountPropagation": "Sideways"},
            {"name": "cfg", "mountPath": "/c", "mountPropagation": "Bidirectional"},
            {"name": "cfg", "mountPath": "/d", "recursiveReadOnly": "Enabled", "mountPropagation": "HostToContainer"},
            {"name": "cfg", "mountPath": "/e", "readOnly": true, "recursiveReadOnly": "Always"}
        ]}]
    }))
    .await;
    // kube reports these at the volumeMounts list's path, not the mount's.
    let p = "spec.containers[0].volumeMounts";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [\
{p}.subPath: Invalid value: \"/abs/../x\": must be a relative path, \
{p}.subPath: Invalid value: \"/abs/../x\": must not contain '..', \
{p}[1].subPathExpr: Invalid value: \"$(POD)/..\": subPathExpr and subPath are mutually exclusive, \
{p}.subPathExpr: Invalid value: \"$(POD)/..\": must not contain '..', \
{p}[2].mountPath: Invalid value: \"/a\": must be unique, \
{p}.mountPropagation: Unsupported value: \"Sideways\": supported values: \"Bidirectional\", \"HostToContainer\", \"None\", \
{p}.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers, \
{p}.recursiveReadOnly: Forbidden: may only be specified when readOnly is true, \
{p}.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified, \
{p}.recursiveReadOnly: Unsupported value: \"Always\": supported values: \"Disabled\", \"Enabled\", \"IfPossible\"]")
    );
}

#[tokio::test]
async fn downward_api_env_and_mounts_are_admitted() {
    let spec = json!({
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "host", "hostPath": {"path": "/var/lib/app"}}],
        "containers": [{
            "name": "app", "image": "registry.example.com/app:1.2",
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "APP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app.kubernetes.io/name']"}}},
                {"name": "OWNER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['Example.com/Owner']"}}},
                {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.host"}}},
                {"name": "IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.podIPs"}}},
                {"name": "MEM_MB", "valueFrom": {"resourceFieldRef": {"containerName": "app", "resource": "limits.memory", "divisor": "1Mi"}}},
                {"name": "CPU_M", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}}},
                {"name": "DISK", "valueFrom": {"resourceFieldRef": {"resource": "limits.ephemeral-storage", "divisor": 1}}}
            ],
            "volumeMounts": [
                {"name": "data", "mountPath": "/data", "subPathExpr": "$(POD_NAME)"},
                {"name": "data", "mountPath": "/cache", "subPath": "cache/v1"},
                {"name": "host", "mountPath": "/host", "readOnly": true, "recursiveReadOnly": "Enabled", "mountPropagation": "None"},
                {"name": "host", "mountPath": "/host-live", "readOnly": true, "mountPropagation": "HostToContainer", "recursiveReadOnly": "Disabled"}
            ]
        }]
    });
    let out = admitted(create("", "pods", "default", pod(spec))).await;
    assert_eq!(
        out["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
        "v1"
    );
}

#[tokio::test]
async fn bidirectional_propagation_in_a_privileged_container_is_admitted() {
    let spec = json!({
        "volumes": [{"name": "host", "hostPath": {"path": "/mnt"}}],
        "containers": [{"name": "c", "image": "i",
            "securityContext": {"privileged": true},
            "volumeMounts": [{"name": "host", "mountPath": "/mnt", "mountPropagation": "Bidirectional"}]}]
    });
    admitted(create("", "pods", "default", pod(spec))).await;
}

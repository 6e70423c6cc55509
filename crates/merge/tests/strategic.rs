//! Strategic merge patch (`application/strategic-merge-patch+json`) as a
//! client sees it: one table of cases, each a kind, a stored object, a
//! patch body and the object kube-apiserver 1.34 stores (compared with its
//! key order) or the Status it answers.
//!
//! The expectations follow kube's `strategicpatch` (its test cases
//! re-expressed on built-in kinds: `mergingList` → containers/env/ports,
//! `mergingIntList` → finalizers, `retainKeysMap` → Deployment strategy,
//! `replacingItem` → PodDisruptionBudget selector), the kubectl patches
//! users send, and kube-apiserver's patch handler for errors.

use keelson_api::{FieldOwner, GroupResource, MergeApi, PatchRequest, PatchType};
use keelson_merge::LocalMerge;
use serde_json::{json, Value};

/// What the patch must produce.
enum Want {
    /// The patched object, key order included.
    Object(Value),
    /// The error: code, reason, message.
    Error(u16, &'static str, String),
}

struct Case {
    name: &'static str,
    api_version: &'static str,
    kind: &'static str,
    original: Value,
    patch: String,
    want: Want,
}

const POD: (&str, &str) = ("v1", "Pod");
const CM: (&str, &str) = ("v1", "ConfigMap");
const SVC: (&str, &str) = ("v1", "Service");
const DEPLOY: (&str, &str) = ("apps/v1", "Deployment");
const PDB: (&str, &str) = ("policy/v1", "PodDisruptionBudget");
/// A kind the catalog does not know: no schema at all.
const WIDGET: (&str, &str) = ("example.com/v1", "Widget");

fn ok(
    name: &'static str,
    gvk: (&'static str, &'static str),
    original: Value,
    patch: Value,
    want: Value,
) -> Case {
    raw_ok(name, gvk, original, &patch.to_string(), want)
}

fn raw_ok(
    name: &'static str,
    gvk: (&'static str, &'static str),
    original: Value,
    patch: &str,
    want: Value,
) -> Case {
    Case {
        name,
        api_version: gvk.0,
        kind: gvk.1,
        original,
        patch: patch.to_string(),
        want: Want::Object(want),
    }
}

fn err(
    name: &'static str,
    gvk: (&'static str, &'static str),
    original: Value,
    patch: Value,
    code: u16,
    reason: &'static str,
    message: &str,
) -> Case {
    raw_err(
        name,
        gvk,
        original,
        &patch.to_string(),
        code,
        reason,
        message,
    )
}

fn raw_err(
    name: &'static str,
    gvk: (&'static str, &'static str),
    original: Value,
    patch: &str,
    code: u16,
    reason: &'static str,
    message: &str,
) -> Case {
    Case {
        name,
        api_version: gvk.0,
        kind: gvk.1,
        original,
        patch: patch.to_string(),
        want: Want::Error(code, reason, message.to_string()),
    }
}

/// The 500 kube-apiserver gives a strategicpatch error it does not
/// convert: no reason, Go's message.
fn go_err(
    name: &'static str,
    gvk: (&'static str, &'static str),
    original: Value,
    patch: Value,
    message: &str,
) -> Case {
    err(name, gvk, original, patch, 500, "", message)
}

const PANIC: &str = "This request caused apiserver to panic. Look in the logs for details.";

fn resource(kind: &str) -> GroupResource {
    match kind {
        "Pod" => GroupResource::new("", "pods"),
        "ConfigMap" => GroupResource::new("", "configmaps"),
        "Service" => GroupResource::new("", "services"),
        "Deployment" => GroupResource::new("apps", "deployments"),
        "PodDisruptionBudget" => GroupResource::new("policy", "poddisruptionbudgets"),
        _ => GroupResource::new("example.com", "widgets"),
    }
}

async fn run(merge: &LocalMerge, c: &Case) -> Result<Value, keelson_api::ApiError> {
    merge
        .patch(PatchRequest {
            patch_type: PatchType::StrategicMerge,
            gr: resource(c.kind),
            kind: c.kind.into(),
            owner: FieldOwner {
                manager: "kubectl".into(),
                api_version: c.api_version.into(),
                subresource: String::new(),
            },
            force: false,
            original: c.original.clone(),
            patch: c.patch.as_bytes().to_vec(),
        })
        .await
}

fn meta(name: &str) -> Value {
    json!({"name": name, "namespace": "default"})
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(map_cases());
    v.extend(directive_cases());
    v.extend(replace_list_cases());
    v.extend(merge_list_cases());
    v.extend(primitive_list_cases());
    v.extend(set_element_order_cases());
    v.extend(retain_keys_cases());
    v.extend(kubectl_cases());
    v.extend(untyped_cases());
    v.extend(body_error_cases());
    v
}

/// Maps merge key by key; `null` deletes; scalars are replaced.
fn map_cases() -> Vec<Case> {
    vec![
        ok(
            "configmap data merges keys",
            CM,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("c"), "data": {"a": "1", "b": "2"}}),
            json!({"data": {"b": "3", "c": "4"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("c"), "data": {"a": "1", "b": "3", "c": "4"}}),
        ),
        ok(
            "null deletes a key",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1", "b": "2"}}),
            json!({"data": {"a": null}}),
            json!({"metadata": meta("c"), "data": {"b": "2"}}),
        ),
        ok(
            "null for a missing key is ignored",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": {"zz": null}, "binaryData": null}),
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
        ),
        ok(
            "null deletes every listed key",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1", "b": "2"}}),
            json!({"data": {"a": null, "b": null}}),
            json!({"metadata": meta("c"), "data": {}}),
        ),
        ok(
            "new keys are appended in patch order",
            CM,
            json!({"metadata": meta("c"), "data": {"m": "1"}}),
            json!({"immutable": true, "data": {"z": "1", "b": "2"}, "binaryData": {"k": "AA=="}}),
            json!({"metadata": meta("c"), "data": {"m": "1", "z": "1", "b": "2"}, "immutable": true, "binaryData": {"k": "AA=="}}),
        ),
        ok(
            "a new map drops its nulls",
            POD,
            json!({"metadata": meta("p")}),
            json!({"metadata": {"annotations": {"key1": "value1", "key2": null}}}),
            json!({"metadata": {"name": "p", "namespace": "default", "annotations": {"key1": "value1"}}}),
        ),
        ok(
            "nested nulls of a new value are dropped at any depth",
            POD,
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i"}]}}),
            json!({"spec": {"securityContext": {"runAsUser": 1000, "seLinuxOptions": {"level": null, "user": "u"}, "fsGroup": null}}}),
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i"}], "securityContext": {"runAsUser": 1000, "seLinuxOptions": {"user": "u"}}}}),
        ),
        ok(
            "scalars are replaced",
            DEPLOY,
            json!({"metadata": meta("d"), "spec": {"replicas": 3, "paused": false, "minReadySeconds": 5}}),
            json!({"spec": {"replicas": 5, "paused": true}}),
            json!({"metadata": meta("d"), "spec": {"replicas": 5, "paused": true, "minReadySeconds": 5}}),
        ),
        // kube merges, then the typed round trip refuses the result.
        err(
            "a value of another type does not convert back",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": "flat"}),
            422,
            "Invalid",
            " \"\" is invalid: patch: Invalid value: \"map[data:flat]\": cannot restore map from string",
        ),
        ok(
            "a map replacing a scalar drops its nulls",
            CM,
            json!({"metadata": meta("c"), "data": "flat"}),
            json!({"data": {"a": "1", "b": null}}),
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
        ),
        ok(
            "an empty patch changes nothing",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({}),
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
        ),
        raw_ok(
            "a null body is an empty patch",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            "null",
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
        ),
        ok(
            "an empty map merges nothing",
            POD,
            json!({"metadata": {"name": "p", "labels": {"a": "1"}}}),
            json!({"metadata": {"labels": {}}}),
            json!({"metadata": {"name": "p", "labels": {"a": "1"}}}),
        ),
        ok(
            "deleting a whole map field",
            POD,
            json!({"metadata": {"name": "p", "labels": {"a": "1"}, "annotations": {"x": "y"}}}),
            json!({"metadata": {"labels": null}}),
            json!({"metadata": {"name": "p", "annotations": {"x": "y"}}}),
        ),
        ok(
            "numbers keep their JSON form",
            DEPLOY,
            json!({"metadata": meta("d"), "spec": {"replicas": 1, "progressDeadlineSeconds": 600}}),
            json!({"spec": {"replicas": 2.0, "progressDeadlineSeconds": 600}}),
            json!({"metadata": meta("d"), "spec": {"replicas": 2.0, "progressDeadlineSeconds": 600}}),
        ),
        err(
            "a fraction does not convert to an integer field",
            DEPLOY,
            json!({"metadata": meta("d"), "spec": {"replicas": 1, "progressDeadlineSeconds": 600}}),
            json!({"spec": {"replicas": 2.5, "progressDeadlineSeconds": 600}}),
            422,
            "Invalid",
            " \"\" is invalid: patch: Invalid value: \"map[spec:map[progressDeadlineSeconds:600 replicas:2.5]]\": cannot convert float64 to int32",
        ),
    ]
}

/// `$patch` on maps.
fn directive_cases() -> Vec<Case> {
    vec![
        ok(
            "$patch: replace replaces a map",
            POD,
            json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}}),
            json!({"metadata": {"labels": {"$patch": "replace", "x": "1"}}}),
            json!({"metadata": {"name": "p", "labels": {"x": "1"}}}),
        ),
        ok(
            "$patch: replace alone empties a map",
            POD,
            json!({"metadata": {"name": "p", "labels": {"a": "1"}}}),
            json!({"metadata": {"labels": {"$patch": "replace"}}}),
            json!({"metadata": {"name": "p", "labels": {}}}),
        ),
        ok(
            "$patch: delete empties a map",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1", "b": "2"}}),
            json!({"data": {"$patch": "delete"}}),
            json!({"metadata": meta("c"), "data": {}}),
        ),
        ok(
            "$patch: replace at the top replaces the object",
            CM,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": {"b": "2"}, "metadata": meta("c"), "$patch": "replace"}),
            json!({"data": {"b": "2"}, "metadata": meta("c")}),
        ),
        ok(
            "$patch: delete at the top empties the object",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"$patch": "delete"}),
            json!({}),
        ),
        ok(
            "a directive map for a field the object lacks adds nothing",
            POD,
            json!({"metadata": meta("p")}),
            json!({"metadata": {"annotations": {"$patch": "replace", "a": "1"}}}),
            json!({"metadata": meta("p")}),
        ),
        ok(
            "a directive map for a field of another type removes it",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "k", "operator": "Exists"}], "hostname": "h"}}),
            json!({"spec": {"tolerations": {"$patch": "delete"}}}),
            json!({"metadata": meta("p"), "spec": {"hostname": "h"}}),
        ),
        ok(
            "$patch: replace on a nested map in a merged container",
            POD,
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}]}}),
            json!({"spec": {"containers": [{"name": "c", "resources": {"$patch": "replace", "limits": {"cpu": "1"}}}]}}),
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}}),
        ),
        ok(
            "$patch: delete on a nested map leaves it empty",
            POD,
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"privileged": true}}]}}),
            json!({"spec": {"containers": [{"name": "c", "securityContext": {"$patch": "delete"}}]}}),
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {}}]}}),
        ),
        go_err(
            "unknown $patch on a map",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": {"$patch": "foo", "x": "1"}}),
            "unknown patch type: foo in map: map[$patch:foo x:1]",
        ),
        go_err(
            "$patch: merge is not a map directive",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": {"$patch": "merge"}}),
            "unknown patch type: merge in map: map[$patch:merge]",
        ),
        go_err(
            "a $patch that is not a string",
            CM,
            json!({"metadata": meta("c"), "data": {"a": "1"}}),
            json!({"data": {"$patch": 5}}),
            "unknown patch type: %!s(int64=5) in map: map[$patch:5]",
        ),
        go_err(
            "unknown $patch at the top",
            CM,
            json!({"metadata": meta("c")}),
            json!({"$patch": true, "data": {"a": 1.5}}),
            "unknown patch type: %!s(bool=true) in map: map[$patch:true data:map[a:1.5]]",
        ),
    ]
}

/// Lists without the merge strategy are replaced.
fn replace_list_cases() -> Vec<Case> {
    vec![
        ok(
            "tolerations are replaced",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]}}),
            json!({"spec": {"tolerations": [{"key": "c", "operator": "Exists"}]}}),
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "c", "operator": "Exists"}]}}),
        ),
        ok(
            "container args are replaced",
            POD,
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "args": ["a", "b"]}]}}),
            json!({"spec": {"containers": [{"name": "c", "args": ["b", "c"]}]}}),
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "args": ["b", "c"]}]}}),
        ),
        ok(
            "an empty list replaces a list",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}}),
            json!({"spec": {"tolerations": []}}),
            json!({"metadata": meta("p"), "spec": {"tolerations": []}}),
        ),
        ok(
            "null deletes a list",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}], "hostname": "h"}}),
            json!({"spec": {"tolerations": null}}),
            json!({"metadata": meta("p"), "spec": {"hostname": "h"}}),
        ),
        ok(
            "a replaced list keeps its items as sent",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}}),
            json!({"spec": {"tolerations": [{"key": "b", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"key": "a", "operator": "Exists"}]}}),
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "b", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"key": "a", "operator": "Exists"}]}}),
        ),
        ok(
            "a replace-strategy map is replaced (PodDisruptionBudget selector)",
            PDB,
            json!({"metadata": meta("pdb"), "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "k", "operator": "Exists"}]}}}),
            json!({"spec": {"selector": {"matchLabels": {"b": "2"}}}}),
            json!({"metadata": meta("pdb"), "spec": {"minAvailable": 1, "selector": {"matchLabels": {"b": "2"}}}}),
        ),
        ok(
            "$deleteFromPrimitiveList deletes from a list without merge strategy",
            POD,
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "args": ["a", "b", "c", "b"]}]}}),
            json!({"spec": {"containers": [{"name": "c", "$deleteFromPrimitiveList/args": ["b"]}]}}),
            json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "i", "args": ["a", "c"]}]}}),
        ),
        go_err(
            "$deleteFromPrimitiveList on a list of maps without merge key",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}}),
            json!({"spec": {"$deleteFromPrimitiveList/tolerations": [{"key": "a"}]}}),
            "cannot merge lists without merge key for struct",
        ),
    ]
}

fn pod_with_containers(containers: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("p"), "spec": {"containers": containers}})
}

/// Lists of maps with `patchStrategy: merge`, matched by merge key.
fn merge_list_cases() -> Vec<Case> {
    let two = json!([
        {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        {"name": "sidecar", "image": "busybox"}
    ]);
    vec![
        ok(
            "a patch item merges into the item with its name",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}),
            pod_with_containers(json!([
                {"name": "c", "image": "nginx:2", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "sidecar", "image": "busybox"}
            ])),
        ),
        ok(
            "a new item goes before the server's items",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "new", "image": "redis"}]}}),
            pod_with_containers(json!([
                {"name": "new", "image": "redis"},
                {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "sidecar", "image": "busybox"}
            ])),
        ),
        ok(
            "patch items keep the patch order among the server's",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A"}, {"name": "B", "value": "b"}, {"name": "C"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "C", "value": "c"}, {"name": "A", "value": "a"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "B", "value": "b"}, {"name": "C", "value": "c"}, {"name": "A", "value": "a"}]}])),
        ),
        ok(
            "patch items in a new order reorder the list",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A"}, {"name": "B", "value": "b"}, {"name": "C"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "C", "value": "c"}, {"name": "A", "value": "a"}, {"name": "B", "value": "x"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "C", "value": "c"}, {"name": "A", "value": "a"}, {"name": "B", "value": "x"}]}])),
        ),
        ok(
            "$patch: delete removes the item",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}),
            pod_with_containers(json!([{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]}])),
        ),
        ok(
            "$patch: delete of a missing item changes nothing",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "ghost", "$patch": "delete"}]}}),
            pod_with_containers(two.clone()),
        ),
        ok(
            "$patch: delete removes every duplicate",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}, {"name": "B"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "A", "$patch": "delete"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "B"}]}])),
        ),
        ok(
            "delete and merge in one list",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}, {"name": "c", "image": "nginx:3"}]}}),
            pod_with_containers(json!([{"name": "c", "image": "nginx:3", "ports": [{"containerPort": 80, "protocol": "TCP"}]}])),
        ),
        ok(
            "a $patch: replace item makes the other items the list",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}}),
            pod_with_containers(json!([{"name": "only", "image": "x"}])),
        ),
        ok(
            "$patch: replace alone empties the list",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A"}, {"name": "B"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"$patch": "replace"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": []}])),
        ),
        ok(
            "an item carrying $patch: replace is itself dropped",
            POD,
            json!({"metadata": meta("p"), "spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}]}}),
            json!({"spec": {"volumes": [{"name": "data", "$patch": "replace", "hostPath": {"path": "/x"}}]}}),
            json!({"metadata": meta("p"), "spec": {"volumes": []}}),
        ),
        ok(
            "an empty patch list leaves a merged list alone",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": []}}),
            pod_with_containers(two.clone()),
        ),
        ok(
            "two patch items with one new name are merged together",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i"}])),
            json!({"spec": {"containers": [{"name": "n", "image": "a"}, {"name": "n", "args": ["x"]}]}}),
            pod_with_containers(json!([{"name": "n", "image": "a", "args": ["x"]}, {"name": "c", "image": "i"}])),
        ),
        ok(
            "nested merge lists merge by their own key (container ports)",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": "UDP"}, {"containerPort": 443}]}]}}),
            pod_with_containers(json!([
                {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "UDP"}, {"containerPort": 443}]},
                {"name": "sidecar", "image": "busybox"}
            ])),
        ),
        ok(
            "a merge key of another JSON type does not match",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}])),
            json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80.0, "name": "http"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "ports": [{"containerPort": 80.0, "name": "http"}, {"containerPort": 80}]}])),
        ),
        ok(
            "env merges by name",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}])),
        ),
        ok(
            "null inside a merged item deletes its field",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": null, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}])),
        ),
        ok(
            "ownerReferences merge by uid",
            POD,
            json!({"metadata": {"name": "p", "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "a", "uid": "1"}]}}),
            json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Y", "name": "b", "uid": "2"}]}}),
            json!({"metadata": {"name": "p", "ownerReferences": [{"apiVersion": "v1", "kind": "Y", "name": "b", "uid": "2"}, {"apiVersion": "v1", "kind": "X", "name": "a", "uid": "1"}]}}),
        ),
        ok(
            "$deleteFromPrimitiveList on a merge-keyed list merges like the list",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i"}])),
            json!({"spec": {"$deleteFromPrimitiveList/containers": [{"name": "c", "image": "j"}]}}),
            pod_with_containers(json!([{"name": "c", "image": "j"}])),
        ),
        go_err(
            "a patch item without the merge key",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"image": "nginx:1.25"}]}}),
            "map: map[image:nginx:1.25] does not contain declared merge key: name",
        ),
        go_err(
            "an empty patch item has no merge key (imagePullSecrets)",
            POD,
            json!({"metadata": meta("p"), "spec": {"imagePullSecrets": [{"name": "r"}]}}),
            json!({"spec": {"imagePullSecrets": [{}]}}),
            "map: map[] does not contain declared merge key: name",
        ),
        go_err(
            "a volume without its merge key",
            POD,
            json!({"metadata": meta("p"), "spec": {"volumes": [{"name": "data", "emptyDir": {}}]}}),
            json!({"spec": {"volumes": [{"hostPath": {"path": "/var/lib/kubelet/pods"}}]}}),
            "map: map[hostPath:map[path:/var/lib/kubelet/pods]] does not contain declared merge key: name",
        ),
        go_err(
            "$patch: delete without the merge key",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"$patch": "delete"}]}}),
            "map: map[$patch:delete] does not contain declared merge key: name",
        ),
        go_err(
            "$patch: merge is refused in a list",
            POD,
            pod_with_containers(two.clone()),
            json!({"spec": {"containers": [{"name": "c", "$patch": "merge"}]}}),
            "merging lists cannot yet be specified in the patch",
        ),
        go_err(
            "an unknown $patch in a list",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "A"}]}])),
            json!({"spec": {"containers": [{"name": "c", "env": [{"name": "A", "$patch": "remove"}]}]}}),
            "unknown patch type: remove in map: map[$patch:remove name:A]",
        ),
        go_err(
            "items that are not maps",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i"}])),
            json!({"spec": {"containers": ["c"]}}),
            "list element types are not identical: [[map[image:i name:c]] [c]]",
        ),
        go_err(
            "a server item without the merge key",
            POD,
            pod_with_containers(json!([{"image": "i"}])),
            json!({"spec": {"containers": [{"name": "c", "image": "j"}]}}),
            "map: map[image:i] does not contain declared merge key: name",
        ),
    ]
}

fn pod_with_finalizers(finalizers: Value) -> Value {
    json!({"metadata": {"name": "p", "finalizers": finalizers}})
}

/// Lists of scalars with `patchStrategy: merge` (finalizers): a union, and
/// `$deleteFromPrimitiveList`.
fn primitive_list_cases() -> Vec<Case> {
    vec![
        ok(
            "a new value goes first",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"finalizers": ["c"]}}),
            pod_with_finalizers(json!(["c", "a", "b"])),
        ),
        ok(
            "values already present are not repeated",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"finalizers": ["b", "c"]}}),
            pod_with_finalizers(json!(["a", "b", "c"])),
        ),
        ok(
            "the patch order wins among patch values",
            POD,
            pod_with_finalizers(json!(["a", "b", "c"])),
            json!({"metadata": {"finalizers": ["c", "a", "b"]}}),
            pod_with_finalizers(json!(["c", "a", "b"])),
        ),
        ok(
            "server-only values stay where they were",
            POD,
            pod_with_finalizers(json!(["a", "b", "c"])),
            json!({"metadata": {"finalizers": ["c", "a"]}}),
            pod_with_finalizers(json!(["b", "c", "a"])),
        ),
        ok(
            "duplicates in the patch collapse",
            POD,
            pod_with_finalizers(json!(["a"])),
            json!({"metadata": {"finalizers": ["b", "b", "a"]}}),
            pod_with_finalizers(json!(["b", "a"])),
        ),
        ok(
            "$deleteFromPrimitiveList removes a value",
            POD,
            pod_with_finalizers(json!(["a", "b", "c"])),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
            pod_with_finalizers(json!(["a", "c"])),
        ),
        ok(
            "$deleteFromPrimitiveList removes every copy",
            POD,
            pod_with_finalizers(json!(["a", "b", "a", "c"])),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
            pod_with_finalizers(json!(["b", "c"])),
        ),
        ok(
            "$deleteFromPrimitiveList of a missing value changes nothing",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["z"]}}),
            pod_with_finalizers(json!(["a", "b"])),
        ),
        ok(
            "$deleteFromPrimitiveList can empty the list",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "b"]}}),
            pod_with_finalizers(json!([])),
        ),
        ok(
            "$deleteFromPrimitiveList for a missing list adds nothing",
            POD,
            json!({"metadata": {"name": "p"}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
            json!({"metadata": {"name": "p"}}),
        ),
        ok(
            "$deleteFromPrimitiveList: null deletes the list",
            POD,
            json!({"metadata": {"name": "p", "finalizers": ["a"], "uid": "u"}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": null}}),
            json!({"metadata": {"name": "p", "uid": "u"}}),
        ),
        ok(
            "a $deleteFromPrimitiveList that is not a list is ignored",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}),
            pod_with_finalizers(json!(["a", "b"])),
        ),
        ok(
            "add and delete in one patch",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
            pod_with_finalizers(json!(["c", "b"])),
        ),
        ok(
            "a new list is taken as sent",
            POD,
            json!({"metadata": {"name": "p"}}),
            json!({"metadata": {"finalizers": ["b", "a", "b"]}}),
            json!({"metadata": {"name": "p", "finalizers": ["b", "a", "b"]}}),
        ),
        raw_err(
            "$deleteFromPrimitiveList without a field",
            POD,
            pod_with_finalizers(json!(["a"])),
            r#"{"metadata":{"$deleteFromPrimitiveList":["a"]}}"#,
            400,
            "BadRequest",
            "invalid patch format of primitive list",
        ),
        raw_err(
            "a key that only starts like $deleteFromPrimitiveList",
            POD,
            pod_with_finalizers(json!(["a"])),
            r#"{"metadata":{"$deleteFromPrimitiveListX/finalizers":["a"]}}"#,
            400,
            "BadRequest",
            "invalid patch format of primitive list",
        ),
        go_err(
            "values of mixed types",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"finalizers": [1]}}),
            "list element types are not identical: [[a b] [1]]",
        ),
        go_err(
            "a null value among strings",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"finalizers": [null]}}),
            "list element types are not identical: [[a b] [<nil>]]",
        ),
        err(
            "a list of lists is refused",
            POD,
            pod_with_finalizers(json!([])),
            json!({"metadata": {"finalizers": [["a"]]}}),
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        ),
        err(
            "a null first element makes kube panic",
            POD,
            pod_with_finalizers(json!([])),
            json!({"metadata": {"finalizers": [null]}}),
            500,
            "InternalError",
            PANIC,
        ),
    ]
}

/// `$setElementOrder/<list>`: the order of a merged list.
fn set_element_order_cases() -> Vec<Case> {
    let env =
        |items: Value| pod_with_containers(json!([{"name": "c", "image": "i", "env": items}]));
    vec![
        ok(
            "new items are placed where the order says",
            POD,
            env(json!([{"name": "A"}, {"name": "B", "value": "2"}])),
            json!({"spec": {"containers": [{"name": "c",
                "$setElementOrder/env": [{"name": "D"}, {"name": "A"}, {"name": "B"}, {"name": "C"}],
                "env": [{"name": "D", "value": "4"}, {"name": "C", "value": "3"}]}]}}),
            env(json!([{"name": "D", "value": "4"}, {"name": "A"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}])),
        ),
        ok(
            "an order entry missing from the list is skipped",
            POD,
            env(json!([{"name": "A"}, {"name": "C"}])),
            json!({"spec": {"containers": [{"name": "c",
                "$setElementOrder/env": [{"name": "C"}, {"name": "B"}, {"name": "A"}],
                "env": [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]}]}}),
            env(json!([{"name": "C", "value": "3"}, {"name": "A", "value": "1"}])),
        ),
        ok(
            "an order alone reorders the list",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i"}, {"name": "sidecar", "image": "b"}])),
            json!({"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "c"}]}}),
            pod_with_containers(json!([{"name": "sidecar", "image": "b"}, {"name": "c", "image": "i"}])),
        ),
        ok(
            "items the order does not name keep their server place",
            POD,
            env(json!([{"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D"}])),
            json!({"spec": {"containers": [{"name": "c", "$setElementOrder/env": [{"name": "D"}, {"name": "B"}]}]}}),
            env(json!([{"name": "A"}, {"name": "C"}, {"name": "D"}, {"name": "B"}])),
        ),
        ok(
            "an ordered list new to the item",
            POD,
            pod_with_containers(json!([{"name": "c", "image": "i"}])),
            json!({"spec": {"containers": [{"name": "c",
                "$setElementOrder/env": [{"name": "X"}, {"name": "Y"}],
                "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}]}}),
            pod_with_containers(json!([{"name": "c", "image": "i", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}])),
        ),
        ok(
            "a new ordered list keeps the patch's key order",
            POD,
            json!({"metadata": {"name": "p"}}),
            json!({"metadata": {"annotations": {"a": "b"}, "$setElementOrder/finalizers": ["x"], "finalizers": ["x"]}}),
            json!({"metadata": {"name": "p", "annotations": {"a": "b"}, "finalizers": ["x"]}}),
        ),
        ok(
            "a deletion next to the order",
            POD,
            env(json!([{"name": "A"}, {"name": "B"}, {"name": "C"}])),
            json!({"spec": {"containers": [{"name": "c",
                "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
                "env": [{"name": "B", "$patch": "delete"}]}]}}),
            env(json!([{"name": "C"}, {"name": "A"}])),
        ),
        ok(
            "primitive values in the given order",
            POD,
            pod_with_finalizers(json!(["a", "b", "c"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}),
            pod_with_finalizers(json!(["c", "a", "b"])),
        ),
        ok(
            "primitive order naming a missing value",
            POD,
            pod_with_finalizers(json!(["a", "c"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["c", "b", "a"]}}),
            pod_with_finalizers(json!(["c", "a"])),
        ),
        ok(
            "primitive add and delete with an order (kubectl apply)",
            POD,
            pod_with_finalizers(json!(["a", "b"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["b", "c"], "finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
            pod_with_finalizers(json!(["b", "c"])),
        ),
        ok(
            "primitive delete with an order keeps server-only values",
            POD,
            pod_with_finalizers(json!(["a", "b", "c", "d"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["a", "b"], "$deleteFromPrimitiveList/finalizers": ["c"]}}),
            pod_with_finalizers(json!(["a", "b", "d"])),
        ),
        go_err(
            "patch items out of the given order",
            POD,
            env(json!([{"name": "A"}, {"name": "C"}, {"name": "B"}])),
            json!({"spec": {"containers": [{"name": "c",
                "$setElementOrder/env": [{"name": "A"}, {"name": "B"}, {"name": "C"}],
                "env": [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]}]}}),
            "The order in patch list:\n[map[name:C value:3] map[name:A value:1]]\n doesn't match $setElementOrder list:\n[map[name:A] map[name:B] map[name:C]]\n",
        ),
        go_err(
            "primitive patch values out of the given order",
            POD,
            pod_with_finalizers(json!(["a", "c", "b"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["c", "a"]}}),
            "The order in patch list:\n[c a]\n doesn't match $setElementOrder list:\n[a b c]\n",
        ),
        go_err(
            "an order that is not a list",
            POD,
            pod_with_finalizers(json!(["a"])),
            json!({"metadata": {"$setElementOrder/finalizers": "a"}}),
            "expected a []interface {}, but received a string",
        ),
        go_err(
            "an order that is null",
            POD,
            pod_with_finalizers(json!(["a"])),
            json!({"metadata": {"$setElementOrder/finalizers": null}}),
            "expected a []interface {}, but received a %!s(<nil>)",
        ),
        go_err(
            "an order for a field that is not a list",
            POD,
            json!({"metadata": {"name": "p"}, "spec": {"hostname": "h"}}),
            json!({"$setElementOrder/metadata": []}),
            "expected a []interface {}, but received a map[string]interface {}",
        ),
        go_err(
            "an ordered list set to null",
            POD,
            pod_with_finalizers(json!(["a"])),
            json!({"metadata": {"$setElementOrder/finalizers": ["a"], "finalizers": null}}),
            "expected a []interface {}, but received a %!s(<nil>)",
        ),
        go_err(
            "an empty ordered list with nothing to order",
            POD,
            json!({"metadata": {"name": "p"}}),
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": []}}),
            "no elements in any of the given slices",
        ),
        go_err(
            "an order entry without the merge key",
            POD,
            env(json!([{"name": "A"}])),
            json!({"spec": {"containers": [{"name": "c", "$setElementOrder/env": [{"nam": "A"}], "env": [{"name": "A", "value": "1"}]}]}}),
            "map: map[nam:A] does not contain declared merge key: name",
        ),
        raw_err(
            "an order key without a field",
            POD,
            pod_with_finalizers(json!(["a"])),
            r#"{"metadata":{"$setElementOrder":["a"]}}"#,
            400,
            "BadRequest",
            "invalid patch format of setElementOrder list",
        ),
        raw_err(
            "a key that only starts like $setElementOrder",
            POD,
            pod_with_finalizers(json!(["a"])),
            r#"{"metadata":{"$setElementOrderX/finalizers":["a"]}}"#,
            400,
            "BadRequest",
            "invalid patch format of setElementOrder list",
        ),
        err(
            "ordering maps of a list without merge key makes kube panic",
            POD,
            json!({"metadata": meta("p"), "spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}}),
            json!({"spec": {"$setElementOrder/tolerations": [{"key": "b"}], "tolerations": [{"key": "b"}]}}),
            500,
            "InternalError",
            PANIC,
        ),
    ]
}

fn deployment_strategy(strategy: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"), "spec": {"replicas": 1, "strategy": strategy}})
}

/// `$retainKeys`: keys not listed are cleared.
fn retain_keys_cases() -> Vec<Case> {
    let rolling = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}});
    vec![
        ok(
            "switching the Deployment strategy with $retainKeys",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            deployment_strategy(json!({"type": "Recreate"})),
        ),
        ok(
            "without $retainKeys the other fields stay",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"type": "Recreate"}}}),
            deployment_strategy(
                json!({"type": "Recreate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
            ),
        ),
        ok(
            "listed fields are merged",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": ["type", "rollingUpdate"], "rollingUpdate": {"maxSurge": 1}}}}),
            deployment_strategy(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}),
            ),
        ),
        ok(
            "a null field need not be listed",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": null}}}),
            deployment_strategy(json!({"type": "Recreate"})),
        ),
        ok(
            "an empty $retainKeys clears the map",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": []}}}),
            deployment_strategy(json!({})),
        ),
        ok(
            "$retainKeys in a volume switches its source",
            POD,
            json!({"metadata": meta("p"), "spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}]}}),
            json!({"spec": {"volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}}),
            json!({"metadata": meta("p"), "spec": {"volumes": [{"name": "data", "hostPath": {"path": "/x"}}, {"name": "cfg", "configMap": {"name": "x"}}]}}),
        ),
        ok(
            "$retainKeys applies to any map",
            POD,
            json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2", "c": "3"}}}),
            json!({"metadata": {"labels": {"$retainKeys": ["a", "c"], "c": "4"}}}),
            json!({"metadata": {"name": "p", "labels": {"a": "1", "c": "4"}}}),
        ),
        ok(
            "parallel lists need not be listed",
            POD,
            json!({"metadata": {"name": "p", "finalizers": ["a", "b"], "labels": {"x": "y"}}}),
            json!({"metadata": {"$retainKeys": ["name", "finalizers"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
            json!({"metadata": {"name": "p", "finalizers": ["b"]}}),
        ),
        err(
            "a patched field missing from $retainKeys",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}),
            400,
            "BadRequest",
            "invalid patch format of retainKeys",
        ),
        err(
            "a volume field missing from $retainKeys",
            POD,
            json!({"metadata": meta("p"), "spec": {"volumes": [{"name": "data", "emptyDir": {}}]}}),
            json!({"spec": {"volumes": [{"name": "data", "$retainKeys": ["name"], "hostPath": {"path": "/x"}}]}}),
            400,
            "BadRequest",
            "invalid patch format of retainKeys",
        ),
        err(
            "$retainKeys that is not a list",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": "type", "type": "Recreate"}}}),
            400,
            "BadRequest",
            "invalid patch format of retainKeys",
        ),
        err(
            "$retainKeys listing a map makes kube panic",
            DEPLOY,
            deployment_strategy(rolling.clone()),
            json!({"spec": {"strategy": {"$retainKeys": [{"type": 1}]}}}),
            500,
            "InternalError",
            PANIC,
        ),
    ]
}

fn deployment(template_meta: Value, containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": template_meta, "spec": {"containers": containers, "restartPolicy": "Always"}}
        }
    })
}

fn service(ports: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("s"), "spec": {"selector": {"app": "web"}, "ports": ports, "type": "ClusterIP"}})
}

/// The patches kubectl sends.
fn kubectl_cases() -> Vec<Case> {
    let old_config = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"nginx:1","name":"c"},{"image":"busybox","name":"old"}]}}}}"#;
    let new_config = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"nginx:2","name":"c"}]}}}}"#;
    let applied = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": old_config}},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
            {"name": "c", "image": "nginx:1", "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"},
            {"name": "old", "image": "busybox", "imagePullPolicy": "Always"}
        ], "dnsPolicy": "ClusterFirst"}}}
    });
    let reapplied = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": new_config}},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
            {"name": "c", "image": "nginx:2", "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"}
        ], "dnsPolicy": "ClusterFirst"}}}
    });
    let c1 = json!([{"name": "c", "image": "nginx:1"}]);
    vec![
        ok(
            "kubectl apply (second time): new image, removed container, annotation",
            DEPLOY,
            applied,
            json!({
                "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": new_config}},
                "spec": {"template": {"spec": {
                    "$setElementOrder/containers": [{"name": "c"}],
                    "containers": [{"image": "nginx:2", "name": "c"}, {"$patch": "delete", "name": "old"}]
                }}}
            }),
            reapplied,
        ),
        ok(
            "kubectl apply adding a container and an env var",
            DEPLOY,
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([{"name": "c", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]),
            ),
            json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "log"}],
            "containers": [
                {"$setElementOrder/env": [{"name": "A"}, {"name": "B"}], "env": [{"name": "B", "value": "2"}], "name": "c"},
                {"image": "fluentd", "name": "log"}
            ]}}}}),
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([
                    {"name": "c", "image": "nginx:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                    {"image": "fluentd", "name": "log"}
                ]),
            ),
        ),
        ok(
            "kubectl set image",
            DEPLOY,
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}]}, {"name": "s", "image": "busybox"}]),
            ),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}),
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}, {"name": "s", "image": "busybox"}]),
            ),
        ),
        ok(
            "kubectl set image on two containers",
            DEPLOY,
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]),
            ),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}, {"name": "a", "image": "2"}]}}}}),
            deployment(
                json!({"labels": {"app": "web"}}),
                json!([{"name": "b", "image": "2"}, {"name": "a", "image": "2"}]),
            ),
        ),
        ok(
            "kubectl rollout restart",
            DEPLOY,
            deployment(json!({"labels": {"app": "web"}}), c1.clone()),
            json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"}}}}}),
            deployment(
                json!({"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"}}),
                c1.clone(),
            ),
        ),
        ok(
            "kubectl rollout restart again",
            DEPLOY,
            deployment(
                json!({"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z", "x": "y"}}),
                c1.clone(),
            ),
            json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2025-02-02T00:00:00Z"}}}}}),
            deployment(
                json!({"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-02-02T00:00:00Z", "x": "y"}}),
                c1.clone(),
            ),
        ),
        ok(
            "kubectl label",
            DEPLOY,
            deployment(json!({}), c1.clone()),
            json!({"metadata": {"labels": {"tier": "frontend"}}}),
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "frontend"}},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {}, "spec": {"containers": c1.clone(), "restartPolicy": "Always"}}}
            }),
        ),
        ok(
            "kubectl label --overwrite and removal",
            POD,
            json!({"metadata": {"name": "p", "labels": {"app": "web", "env": "dev", "old": "x"}}}),
            json!({"metadata": {"labels": {"env": "prod", "old": null}}}),
            json!({"metadata": {"name": "p", "labels": {"app": "web", "env": "prod"}}}),
        ),
        ok(
            "kubectl annotate on an object without annotations",
            SVC,
            service(json!([{"port": 80}])),
            json!({"metadata": {"annotations": {"description": "web front"}}}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default", "annotations": {"description": "web front"}}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], "type": "ClusterIP"}}),
        ),
        ok(
            "kubectl annotate removal",
            CM,
            json!({"metadata": {"name": "c", "annotations": {"a": "1", "b": "2"}}}),
            json!({"metadata": {"annotations": {"a": null}}}),
            json!({"metadata": {"name": "c", "annotations": {"b": "2"}}}),
        ),
        ok(
            "adding a Service port keeps the existing one",
            SVC,
            service(json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}])),
            json!({"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}),
            service(
                json!([{"name": "https", "port": 443, "targetPort": 8443}, {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]),
            ),
        ),
        ok(
            "adding a Service port with kubectl apply's order",
            SVC,
            service(json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}])),
            json!({"spec": {"$setElementOrder/ports": [{"port": 80}, {"port": 443}], "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}),
            service(
                json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}, {"name": "https", "port": 443, "targetPort": 8443}]),
            ),
        ),
        ok(
            "changing a Service port's target",
            SVC,
            service(
                json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}, {"name": "https", "port": 443}]),
            ),
            json!({"spec": {"ports": [{"port": 80, "targetPort": "web"}]}}),
            service(
                json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}, {"name": "https", "port": 443}]),
            ),
        ),
        ok(
            "removing a Service port",
            SVC,
            service(json!([{"port": 80}, {"port": 443}])),
            json!({"spec": {"ports": [{"port": 443, "$patch": "delete"}]}}),
            service(json!([{"port": 80}])),
        ),
        err(
            "a port as a string does not match the number, nor convert",
            SVC,
            service(json!([{"port": 80}])),
            json!({"spec": {"ports": [{"port": "80", "name": "x"}]}}),
            422,
            "Invalid",
            " \"\" is invalid: patch: Invalid value: \"map[spec:map[ports:[map[name:x port:80]]]]\": unrecognized type: int32",
        ),
        ok(
            "kubectl apply on a ConfigMap",
            CM,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"a\":\"1\",\"b\":\"2\"}}"}}, "data": {"a": "1", "b": "2", "live": "x"}}),
            json!({"data": {"a": "9", "b": null}, "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"a\":\"9\"}}"}}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"a\":\"9\"}}"}}, "data": {"a": "9", "live": "x"}}),
        ),
        ok(
            "kubectl patch removing a finalizer",
            POD,
            json!({"metadata": {"name": "p", "finalizers": ["kubernetes.io/pvc-protection", "example.com/x"]}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/x"]}}),
            json!({"metadata": {"name": "p", "finalizers": ["kubernetes.io/pvc-protection"]}}),
        ),
        ok(
            "kubectl scale-style replicas patch",
            DEPLOY,
            deployment(json!({}), c1.clone()),
            json!({"spec": {"replicas": 0}}),
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {}, "spec": {"containers": c1.clone(), "restartPolicy": "Always"}}}
            }),
        ),
        ok(
            "kubectl set env",
            DEPLOY,
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}]),
            ),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]}]}}}}),
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]}]),
            ),
        ),
        ok(
            "kubectl set env removal",
            DEPLOY,
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]}]),
            ),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"$patch": "delete", "name": "A"}]}]}}}}),
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "env": [{"name": "B", "value": "3"}]}]),
            ),
        ),
        ok(
            "kubectl set resources",
            DEPLOY,
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]),
            ),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "200m"}, "requests": {"memory": "64Mi"}}}]}}}}),
            deployment(
                json!({}),
                json!([{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}}]),
            ),
        ),
    ]
}

/// Without a schema (an unknown kind or field): maps merge, lists are
/// replaced, directives still apply.
fn untyped_cases() -> Vec<Case> {
    let widget = |spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("w"), "spec": spec});
    vec![
        ok(
            "an unknown kind merges maps",
            WIDGET,
            widget(json!({"a": {"x": 1, "y": 2}, "b": "keep"})),
            json!({"spec": {"a": {"y": 3, "z": 4}}}),
            widget(json!({"a": {"x": 1, "y": 3, "z": 4}, "b": "keep"})),
        ),
        ok(
            "an unknown kind replaces lists",
            WIDGET,
            widget(json!({"items": [{"name": "a", "v": 1}, {"name": "b"}]})),
            json!({"spec": {"items": [{"name": "a", "v": 2}]}}),
            widget(json!({"items": [{"name": "a", "v": 2}]})),
        ),
        ok(
            "an unknown kind deletes with null",
            WIDGET,
            widget(json!({"a": 1, "b": 2})),
            json!({"spec": {"a": null}}),
            widget(json!({"b": 2})),
        ),
        ok(
            "an unknown kind honours $patch: replace",
            WIDGET,
            widget(json!({"a": {"x": 1}, "b": 2})),
            json!({"spec": {"a": {"$patch": "replace", "y": 1}}}),
            widget(json!({"a": {"y": 1}, "b": 2})),
        ),
        ok(
            "an unknown kind orders a list with $setElementOrder",
            WIDGET,
            widget(json!({"tags": ["a", "b", "c"]})),
            json!({"spec": {"$setElementOrder/tags": ["c", "b", "a"]}}),
            widget(json!({"tags": ["c", "b", "a"]})),
        ),
        ok(
            "an unknown field of a known kind merges like JSON",
            POD,
            json!({"metadata": meta("p"), "spec": {"extra": {"a": [1, 2], "b": {"c": 1}}}}),
            json!({"spec": {"extra": {"a": [3], "b": {"d": 2}}}}),
            json!({"metadata": meta("p"), "spec": {"extra": {"a": [3], "b": {"c": 1, "d": 2}}}}),
        ),
        ok(
            "a free-form field (ControllerRevision data) merges like JSON",
            ("apps/v1", "ControllerRevision"),
            json!({"metadata": meta("r"), "revision": 1, "data": {"spec": {"template": {"x": 1}}, "list": [1]}}),
            json!({"data": {"spec": {"template": {"y": 2}}, "list": [2]}}),
            json!({"metadata": meta("r"), "revision": 1, "data": {"spec": {"template": {"x": 1, "y": 2}}, "list": [2]}}),
        ),
    ]
}

/// Bodies that are not a JSON object: 400 with Go's decoding error.
fn body_error_cases() -> Vec<Case> {
    let o = || json!({"metadata": meta("c")});
    vec![
        raw_err(
            "not JSON",
            CM,
            o(),
            "not json",
            400,
            "BadRequest",
            "invalid character 'o' in literal null (expecting 'u')",
        ),
        raw_err(
            "an empty body",
            CM,
            o(),
            "",
            400,
            "BadRequest",
            "unexpected end of JSON input",
        ),
        raw_err(
            "a truncated object",
            CM,
            o(),
            r#"{"data":"#,
            400,
            "BadRequest",
            "unexpected end of JSON input",
        ),
        raw_err(
            "a bad character",
            CM,
            o(),
            r#"{"data" 1}"#,
            400,
            "BadRequest",
            "invalid character '1' after object key",
        ),
        raw_err(
            "trailing data",
            CM,
            o(),
            "{} x",
            400,
            "BadRequest",
            "invalid character 'x' after top-level value",
        ),
        raw_err(
            "a list body (a JSON patch sent as strategic)",
            CM,
            o(),
            r#"[{"op":"add","path":"/data/a","value":"1"}]"#,
            400,
            "BadRequest",
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        raw_err(
            "a string body",
            CM,
            o(),
            r#""x""#,
            400,
            "BadRequest",
            "json: cannot unmarshal string into Go value of type map[string]interface {}",
        ),
        raw_err(
            "a number body",
            CM,
            o(),
            "5",
            400,
            "BadRequest",
            "json: cannot unmarshal number into Go value of type map[string]interface {}",
        ),
        raw_err(
            "a boolean body",
            CM,
            o(),
            "true",
            400,
            "BadRequest",
            "json: cannot unmarshal bool into Go value of type map[string]interface {}",
        ),
    ]
}

#[tokio::test]
async fn strategic_merge_patch_table() {
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let cases = cases();
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let got = run(&merge, c).await;
        let failure = match (&c.want, got) {
            (Want::Object(want), Ok(got)) => {
                let (w, g) = (want.to_string(), got.to_string());
                (w != g).then(|| format!("want {w}\n     got  {g}"))
            }
            (Want::Object(want), Err(e)) => Some(format!(
                "want {want}\n     got error {} {:?} {:?}",
                e.code,
                e.reason.as_str(),
                e.message
            )),
            (Want::Error(code, reason, msg), Ok(got)) => Some(format!(
                "want error {code} {reason:?} {msg:?}\n     got {got}"
            )),
            (Want::Error(code, reason, msg), Err(e)) => {
                let got = (e.code, e.reason.as_str().to_string(), e.message.clone());
                (got != (*code, reason.to_string(), msg.clone())).then(|| {
                    format!(
                        "want error {code} {reason:?} {msg:?}\n     got error {} {:?} {:?}",
                        got.0, got.1, got.2
                    )
                })
            }
        };
        if let Some(f) = failure {
            failures.push(format!("{}: {f}", c.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn errors_are_status_objects_like_kube() {
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let c = go_err(
        "",
        POD,
        pod_with_containers(json!([{"name": "c", "image": "i"}])),
        json!({"spec": {"containers": [{"image": "j"}]}}),
        "",
    );
    let e = run(&merge, &c).await.unwrap_err();
    // kube-apiserver passes the strategicpatch error through unconverted:
    // a Status with code 500, no reason and no details.
    assert_eq!(
        e.to_status_json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "map: map[image:j] does not contain declared merge key: name", "code": 500})
    );
    let c = err(
        "",
        POD,
        pod_with_finalizers(json!([])),
        json!({"metadata": {"finalizers": [["a"]]}}),
        0,
        "",
        "",
    );
    let e = run(&merge, &c).await.unwrap_err();
    assert_eq!(e.to_status_json()["details"], json!({}));
}

#[tokio::test]
async fn the_original_is_not_changed_by_a_failed_patch() {
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let original = pod_with_containers(json!([{"name": "c", "image": "i"}]));
    let c = go_err(
        "",
        POD,
        original.clone(),
        json!({"spec": {"containers": [{"image": "j"}]}}),
        "",
    );
    assert!(run(&merge, &c).await.is_err());
    assert_eq!(c.original, original);
}

/// A small xorshift generator: deterministic random patches.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }

    /// A value built from the directives, keys and shapes kube handles.
    fn value(&mut self, depth: u32) -> Value {
        const KEYS: &[&str] = &[
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$setElementOrder/finalizers",
            "$deleteFromPrimitiveList/finalizers",
            "$deleteFromPrimitiveList/args",
            "$setElementOrder",
            "metadata",
            "spec",
            "containers",
            "finalizers",
            "labels",
            "name",
            "image",
            "env",
            "ports",
            "containerPort",
            "args",
            "volumes",
            "tolerations",
            "value",
        ];
        const WORDS: &[&str] = &["replace", "delete", "merge", "c", "a", "name", "image"];
        match self.next() % if depth == 0 { 4 } else { 7 } {
            0 => Value::Null,
            1 => json!(self.pick(WORDS)),
            2 => json!(self.next() % 3),
            3 => json!(self.next().is_multiple_of(2)),
            4 | 5 => {
                let n = self.next() % 4;
                let mut m = serde_json::Map::new();
                for _ in 0..n {
                    m.insert(self.pick(KEYS).to_string(), self.value(depth - 1));
                }
                Value::Object(m)
            }
            _ => {
                let n = self.next() % 4;
                Value::Array((0..n).map(|_| self.value(depth - 1)).collect())
            }
        }
    }
}

#[tokio::test]
async fn random_patches_never_panic() {
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let original = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["a", "b"]},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "args": ["x"], "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 1}]},
                {"name": "a", "image": "j"}
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "tolerations": [{"key": "k"}]
        }
    });
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let patch = match rng.value(5) {
            Value::Object(m) => Value::Object(m),
            other => json!({"spec": other, "metadata": rng.value(3)}),
        };
        let c = raw_ok("", POD, original.clone(), &patch.to_string(), Value::Null);
        if let Err(e) = run(&merge, &c).await {
            assert!(matches!(e.code, 400 | 422 | 500), "{patch}: {e:?}");
        }
    }
}
